"""URIs in the one form rules and routes compare: RFC 3986's syntax-based normalization (section 6.2.2).

Two spellings of one URI, `file:///docs/%7Eada/../plan` and `file:///docs/plan`,
must meet the same rule and reach the same resource, or a rule is side-stepped by
re-spelling what it names. The scheme and the host are lowercased, percent-escapes
uppercased and those of unreserved characters decoded, and `.` and `..` segments
removed, in that order, so an escaped `%2E%2E` is removed like `..`. Nothing that
depends on a scheme (a default port, an empty path as `/`) is changed: resources
of any scheme are listed by upstream servers, and only they know its rules.
"""

import re

# RFC 3986, appendix B: scheme, authority, path, query and fragment of any URI reference.
_PARTS = re.compile(r"^(?:([^:/?#]+):)?(?://([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?$", re.DOTALL)
_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
# The host of an authority: after any userinfo, before any port (an IP literal keeps its colons).
_HOST = re.compile(r"^((?:[^@]*@)?)(\[[^\]]*\]|[^:]*)(.*)$", re.DOTALL)


def normalized(uri: str) -> str:
    """`uri` in RFC 3986's normal form: equal for any two spellings that section 6.2.2 says are equivalent."""
    scheme, authority, path, query, fragment = _PARTS.match(uri).groups()
    text = f"{scheme.lower()}:" if scheme is not None else ""
    if authority is not None:
        userinfo, host, port = _HOST.match(authority).groups()
        # Decoded before it is lowercased, so that %41 is an "a"; the escapes left are uppercased again.
        text += "//" + _escapes(userinfo) + _escapes(_escapes(host).lower()) + _escapes(port)
    text += remove_dot_segments(_escapes(path))
    if query is not None:
        text += "?" + _escapes(query)
    if fragment is not None:
        text += "#" + _escapes(fragment)
    return text


def _escapes(text: str) -> str:
    def one(match):
        char = chr(int(match[1], 16))
        return char if char in _UNRESERVED else "%" + match[1].upper()

    return _ESCAPE.sub(one, text)


def remove_dot_segments(path: str) -> str:
    """RFC 3986, section 5.2.4, walking the path once."""
    output: list[str] = []
    i, end = 0, len(path)
    while i < end:
        if path.startswith("../", i):
            i += 3
        elif path.startswith("./", i) or path.startswith("/./", i):
            i += 2
        elif path.startswith("/../", i):
            i += 3
            if output:
                output.pop()
        elif path[i:] == "/.":
            output.append("/")
            i = end
        elif path[i:] == "/..":
            if output:
                output.pop()
            output.append("/")
            i = end
        elif path[i:] in (".", ".."):
            i = end
        else:
            j = path.find("/", i + 1 if path[i] == "/" else i)
            j = end if j == -1 else j
            output.append(path[i:j])
            i = j
    return "".join(output)
