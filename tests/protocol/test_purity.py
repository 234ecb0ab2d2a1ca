"""The protocol package stays pure: no Django, nothing else of the application."""

import ast
import json
import subprocess
import sys
from pathlib import Path

PACKAGE = "approvals.protocol"
ROOT = Path(__file__).resolve().parents[2]
PACKAGE_DIR = ROOT / "approvals" / "protocol"


def imported_modules(path: Path, root: Path = ROOT):
    module = ".".join(path.relative_to(root).with_suffix("").parts)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level else ""
            target = ".".join(part for part in (base, node.module) if part)
            yield target
            yield from (f"{target}.{alias.name}" for alias in node.names)


def forbidden(name: str) -> bool:
    top = name.split(".")[0]
    if top == "django":
        return True
    return top == "approvals" and name != "approvals" and not (name == PACKAGE or name.startswith(PACKAGE + "."))


def test_it_finds_no_import_of_django_or_the_rest_of_the_application_in_any_protocol_module():
    sources = sorted(PACKAGE_DIR.rglob("*.py"))
    assert {"canonical.py", "schemas.py", "tools.py", "results.py"} <= {path.name for path in sources}
    offenders = {
        str(path.relative_to(ROOT)): name for path in sources for name in imported_modules(path) if forbidden(name)
    }
    assert offenders == {}


def test_it_would_catch_relative_and_absolute_imports_that_leave_the_package(tmp_path):
    module = tmp_path / "approvals" / "protocol" / "leaky.py"
    module.parent.mkdir(parents=True)
    module.write_text(
        "from . import canonical\n"
        "from ..models import Tool\n"
        "from .. import audit\n"
        "import django.conf\n"
        "from django.db import models\n"
    )
    found = [name for name in imported_modules(module, root=tmp_path) if forbidden(name)]
    assert found == [
        "approvals.models",
        "approvals.models.Tool",
        "approvals.audit",
        "django.conf",
        "django.db",
        "django.db.models",
    ]


def test_it_imports_the_whole_package_without_loading_django():
    code = (
        "import json, pkgutil, importlib, sys\n"
        f"import {PACKAGE} as package\n"
        "for info in pkgutil.walk_packages(package.__path__, package.__name__ + '.'):\n"
        "    importlib.import_module(info.name)\n"
        "print(json.dumps(sorted(name for name in sys.modules if name.split('.')[0] in ('django', 'approvals'))))\n"
    )
    completed = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    loaded = json.loads(completed.stdout)
    assert f"{PACKAGE}.schemas" in loaded
    assert [name for name in loaded if forbidden(name)] == []
