"""What a web process does once, as it starts."""

import subprocess
import sys

from tests.fixtures.servers import REPO

PROBE = """
import gc
import console.asgi
from django.template import engines
loader = engines["django"].engine.template_loaders[0]
print(gc.get_freeze_count(), len(loader.get_template_cache))
"""


def test_it_compiles_its_templates_and_keeps_start_up_objects_out_of_garbage_collection():
    probe = subprocess.run([sys.executable, "-c", PROBE], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert probe.returncode == 0, probe.stderr
    frozen, templates = (int(number) for number in probe.stdout.split())
    # Django, the models and the templates alone make well over fifty thousand objects.
    assert frozen > 50_000
    assert templates >= len(list((REPO / "templates").rglob("*.html")))
