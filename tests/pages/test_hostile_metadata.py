"""Everything an upstream server sends is untrusted: it must render as text, never as markup."""

import base64

import pytest
from django.urls import reverse

from tests.fixtures.catalog import make_server, make_tool

IMG = "<img src=x onerror=alert(1)>"
SCRIPT = "<script>alert(1)</script>"
PNG = "data:image/png;base64," + base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 16).decode()
SVG = (
    "data:image/svg+xml;base64,"
    + base64.b64encode(b'<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>').decode()
)


@pytest.fixture
def hostile(db):
    server = make_server(instructions=f"Use me. {SCRIPT}", server_info={"name": IMG, "version": SCRIPT})
    return make_tool(
        server,
        "lookup",
        title=f"Lookup {IMG}",
        description=f"Finds a record. {SCRIPT}\n{IMG}",
        inputSchema={
            "type": "object",
            "properties": {"id": {"type": "string", "title": IMG, "description": SCRIPT, "x-evil": IMG}},
        },
        icons=[
            {"src": "http://tracker.example/pixel.png", "mimeType": "image/png"},
            {"src": SVG, "mimeType": "image/svg+xml"},
            {"src": PNG, "mimeType": "image/png", "sizes": ["16x16"]},
        ],
    )


def assert_inert(html):
    assert IMG not in html and SCRIPT not in html
    # The console's own script is the only one on the page.
    assert html.count("<script") == 1 and '<script src="/static/console.js" defer></script>' in html
    assert "<img src=x" not in html


@pytest.mark.parametrize("page", ["catalog", "tool", "server", "servers"])
def test_it_renders_hostile_tool_metadata_escaped(operator_client, hostile, page):
    args = {"tool": [hostile.pk], "server": [hostile.server.slug]}.get(page, [])
    html = operator_client.get(reverse(page, args=args)).content.decode()
    assert_inert(html)


def test_it_shows_the_escaped_text_of_a_hostile_title_and_schema_property(operator_client, hostile):
    html = operator_client.get(reverse("tool", args=[hostile.pk])).content.decode()
    assert "Lookup &lt;img src=x onerror=alert(1)&gt;" in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "x-evil" in html


def test_it_drops_http_and_svg_icons_and_keeps_a_data_png(operator_client, hostile):
    html = operator_client.get(reverse("tool", args=[hostile.pk])).content.decode()
    assert "tracker.example" not in html.split("Raw definition")[0]
    assert "svg+xml" not in html.split("Raw definition")[0]
    assert f'<img class="icon" src="{PNG}" width="32" height="32" alt="">' in html


def test_it_sends_a_content_security_policy_without_inline_script(operator_client, hostile):
    response = operator_client.get(reverse("tool", args=[hostile.pk]))
    policy = response["Content-Security-Policy"]
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy
