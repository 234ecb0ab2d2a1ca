"""Paths into an untrusted JSON document as a reader writes them: `inputSchema.properties["odd key"][0]`."""

import json
import re

# How deep the walks of a definition go, since an untrusted document may nest as deep as it likes.
MAX_DEPTH = 20
PLAIN_KEY = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$-]*$")


def join(path, key):
    if PLAIN_KEY.match(key):
        return f"{path}.{key}" if path else key
    return f"{path}[{json.dumps(key, ensure_ascii=False)}]"
