"""The Connect page's snippets for code of one's own and for the MCP Inspector, run as shown against a live console,
with the token the page made for them: the environment snippet sets the variable as a shell would, then the snippet."""

import html
import os
import re
import subprocess
import sys
from urllib.parse import urlsplit

import pytest
from django.urls import reverse

from tests.fixtures.catalog import make_server, make_tool
from tests.fixtures.servers import NODE_DIR, node_bin

RUN_SECONDS = 120
INSPECTOR = NODE_DIR / "node_modules" / ".bin" / "mcp-inspector"


def shown(page: str, key: str) -> str:
    return html.unescape(re.search(rf'<pre class="code"[^>]* id="snippet-{key}"[^>]*>(.*?)</pre>', page, re.S).group(1))


@pytest.fixture
def connect_page(live_console, login):
    """The Connect page as an admin sees it at the live console's address, right after making a token on it."""
    make_tool(make_server("Records", tool_prefix="records_"), "lookup")
    host = urlsplit(live_console).netloc
    response = login("admin").post(reverse("connect"), {"name": "try-it", "tool_globs": "*"}, HTTP_HOST=host)
    return response.content.decode()


def run_as_shown(page, command, cwd, env):
    script = f"{shown(page, 'environment')}\n{command}\n"
    return subprocess.run(["sh", "-c", script], cwd=cwd, capture_output=True, text=True, timeout=RUN_SECONDS, env=env)


def test_it_lists_the_consoles_tools_with_the_python_sdk_snippet(connect_page, live_console, tmp_path):
    (tmp_path / "list_tools.py").write_text(shown(connect_page, "python-sdk"))

    ran = run_as_shown(connect_page, f"{sys.executable} list_tools.py", tmp_path, {})

    assert f'URL = "{live_console}/mcp"' in shown(connect_page, "python-sdk")
    assert ran.returncode == 0, ran.stderr
    assert "records_lookup" in ran.stdout.split()


def test_it_lists_the_consoles_tools_with_the_inspector_snippet(connect_page, live_console, tmp_path):
    if node_bin() is None or not INSPECTOR.exists():
        pytest.skip("the MCP Inspector is not installed; run `cd tests/node && npm install`")
    # npx finds the Inspector installed in tests/node, and runs it with tests/node's Node 22 ahead on the PATH.
    path = f"{os.path.dirname(node_bin())}{os.pathsep}{os.environ['PATH']}"

    ran = run_as_shown(connect_page, shown(connect_page, "inspector"), NODE_DIR, {"PATH": path, "HOME": str(tmp_path)})

    assert f"--cli {live_console}/mcp " in shown(connect_page, "inspector")
    assert ran.returncode == 0, ran.stderr
    assert '"name": "records_lookup"' in ran.stdout
