"""Every page of the console, for every role, with rows of long values: at 1280×800 and at 1440×900 nothing scrolls
sideways, nothing runs past the viewport's right edge or its card's, and the navigation keeps to one line; at 1280
axe-core finds no serious or critical violation. The pages come from the URL conf, so a new one is checked, or
named below as an exclusion, or this test fails."""

from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from approvals.slack import linking
from tests.browser.conftest import sign_in
from tests.browser.long_rows import PEOPLE, make_long_rows
from tests.fixtures.people import make_user

pytestmark = pytest.mark.browser

AXE = Path(__file__).parents[1] / "node" / "node_modules" / "axe-core" / "axe.min.js"
VIEWPORT = {"width": 1280, "height": 800}
# The other laptop width the pages must fit: the walk resizes to it on each page and back.
WIDE = {"width": 1440, "height": 900}
# Who visits the pages: each person the demo seeds, an admin without the other roles, and nobody signed in.
VISITORS = [None, *PEOPLE]

# The routes that take an argument, and the objects of long_rows whose pages they show.
OBJECTS = {
    "call": lambda rows: [[rows["finished"].pk]],
    "call_edit": lambda rows: [[rows["pending"].pk]],
    "call_like_this": lambda rows: [[rows["pending"].pk]],
    "input": lambda rows: [[rows["input"].pk]],
    "audit_call": lambda rows: [[rows["finished"].pk]],
    "audit_event": lambda rows: [[seq] for seq in rows["events"]],
    "server": lambda rows: [[rows["server"].slug]],
    "server_edit": lambda rows: [[rows["server"].slug]],
    "tool": lambda rows: [[rows["tool"].pk]],
    "tool_review": lambda rows: [[rows["tool"].pk]],
    "entry_review": lambda rows: [[kind, item.pk] for kind, item in rows["entries"]],
    "rule_edit": lambda rows: [[rows["rule"].pk]],
    "rule_delete": lambda rows: [[rows["rule"].pk]],
    "token_edit": lambda rows: [[rows["token"].pk]],
    "token_rotate": lambda rows: [[rows["token"].pk]],
    "token_revoke": lambda rows: [[rows["token"].pk]],
    "webhook": lambda rows: [[rows["webhook"].pk]],
    "webhook_rotate": lambda rows: [[rows["webhook"].pk]],
    "webhook_delete": lambda rows: [[rows["webhook"].pk]],
    # The page a Slack user's link opens, for a link the console signed.
    "slack_link": lambda rows: [[linking.link_url("", "T0TEAM", "U0LONG", "a-long-slack-name" * 4).split("/")[-2]]],
}
# Routes that are no page a person reads, each with why; a route in neither map nor here fails the test.
EXCLUDED = {
    # Django's own admin, styled by Django: everything under its prefix.
    "admin/": "Django's admin",
    # Machine interfaces: MCP, the JSON API and its schema, OAuth's and the console's metadata documents.
    "mcp_endpoint": "MCP",
    "slack_interactions": "Slack's interactivity endpoint, signed by Slack",
    "api-1:": "the JSON API (its docs page is checked, below)",
    "mcp_resource_metadata": "JSON metadata",
    ".well-known/oauth-protected-resource/mcp": "JSON metadata",
    "oauth2_provider:oauth-server-metadata": "JSON metadata",
    ".well-known/openid-configuration": "JSON metadata",
    "oauth2_provider:token": "OAuth's token endpoint, JSON",
    "oauth2_provider:dcr-register": "OAuth's registration endpoint, JSON",
    "oauth2_provider:dcr-register-management": "OAuth's registration endpoint, JSON",
    "upstream_client_metadata": "JSON metadata",
    "web_manifest": "the web app's manifest, JSON (tests/push/test_pages.py)",
    "service_worker": "the service worker's script (tests/browser/test_push_browser.py)",
    # The consent page shows only inside an OAuth client's authorization request (tests/oauth drive one).
    "oauth2_provider:authorize": "needs a registered OAuth client's request",
    # Redirects that show nothing of their own.
    "home": "sends each role to its first page",
    "login_local": "the login page's form for superusers, under LOCAL_LOGIN=false; here it redirects to the login page",
    # Hand-offs to another site: they redirect and show nothing of their own.
    "upstream_oauth_callback": "ends an upstream authorization and redirects",
    "sso_start": "redirects to the OpenID provider",
    "sso_callback": "ends an SSO sign-in and redirects",
    # Downloads.
    "audit_export_csv": "a CSV file",
    "audit_export_jsonl": "a JSON Lines file",
    "audit_public_key": "a PEM file",
    "call_media": "an image or audio file of a result",
    "input_media": "an image or audio file of an input request",
    # Actions: POST only, each answering with a redirect to a page checked here.
    "logout": "POST",
    "queue_bulk": "POST",
    "call_decide": "POST",
    "call_claim": "POST",
    "call_release": "POST",
    "input_answer": "POST",
    "server_test": "POST",
    "server_sync": "POST",
    "server_connect": "POST",
    "tool_accept": "POST",
    "tool_reject": "POST",
    "server_accept_tools": "POST",
    "server_reject_tools": "POST",
    "entry_accept": "POST",
    "entry_reject": "POST",
    "rule_move": "POST",
    "rule_enable": "POST",
    "webhook_test": "POST",
    "webhook_redeliver": "POST",
    "audit_verify": "POST",
    "audit_evidence": "POST",
    "audit_retention": "POST",
    "api_key_revoke": "POST",
    "account_connect": "POST",
    "account_disconnect": "POST",
    "slack_unlink": "POST",
    "push_device_add": "POST",
    "push_device_remove": "POST",
    "person_roles": "POST",
    "person_deactivate": "POST",
    "person_reactivate": "POST",
}
# The JSON API's one page: its documentation.
INCLUDED = {"api-1:openapi-view"}

# How far the page scrolls sideways; what lies past the viewport's right edge, or its card's, and is not clipped by
# an ancestor that scrolls or hides it; and, on a page with the main navigation, whether it keeps to one line.
FITS = """() => {
  const width = document.documentElement.clientWidth;
  const past = [];
  for (const element of document.body.querySelectorAll("*")) {
    const box = element.getBoundingClientRect();
    const card = element.parentElement && element.parentElement.closest(".card");
    const edge = card ? Math.min(width, card.getBoundingClientRect().right) : width;
    if (!box.width || !box.height || box.right <= edge + 1) continue;
    let clipped = false;
    for (let parent = element.parentElement; parent && parent !== document.body; parent = parent.parentElement) {
      if (getComputedStyle(parent).overflowX !== "visible") { clipped = true; break; }
    }
    if (!clipped) past.push(`${element.tagName.toLowerCase()}.${element.className} ends at ${Math.round(box.right)}`);
  }
  const problems = {};
  const sideways = document.documentElement.scrollWidth - width;
  if (sideways > 0) problems.scrollsSidewaysBy = sideways;
  if (past.length) problems.past = past.slice(0, 5);
  const nav = document.querySelector("nav.mainnav");
  if (nav) {
    const lines = new Set([...nav.children].map((item) => Math.round(item.getBoundingClientRect().top))).size;
    if (lines !== 1) problems.navigationLines = lines;
    if (nav.scrollWidth > nav.clientWidth) problems.navigationClipped = true;
  }
  return Object.keys(problems).length ? problems : null;
}"""
SERIOUS = """async () => {
  // A rule whose every finding is minor or moderate (its own impact, or else its checks') is left out: it could
  // report nothing kept below.
  const impacts = (rule) =>
    rule.impact ? [rule.impact] : [...rule.any, ...rule.all, ...rule.none].map((check) =>
      axe._audit.data.checks[typeof check === "string" ? check : check.id].impact);
  const mild = (rule) =>
    impacts(rule).length > 0 && impacts(rule).every((impact) => ["minor", "moderate"].includes(impact));
  const rules = Object.fromEntries(axe._audit.rules.filter(mild).map((rule) => [rule.id, {enabled: false}]));
  // Building a CSS selector for each element checked is most of axe's time; the markup names what it finds.
  const found = await axe.run(document, {resultTypes: ["violations"], selectors: false, iframes: false, rules});
  return found.violations
    .filter((violation) => ["serious", "critical"].includes(violation.impact))
    .map((violation) => ({rule: violation.id, nodes: violation.nodes.slice(0, 3).map((node) => node.html)}));
}"""


def routes(patterns=None, prefix="", namespace=""):
    """Each route of the URL conf as (its key: its name or, unnamed, its route; its route; its parameters)."""
    for pattern in get_resolver().url_patterns if patterns is None else patterns:
        if isinstance(pattern, URLResolver):
            inner = f"{pattern.namespace}:" if pattern.namespace else namespace
            yield from routes(pattern.url_patterns, prefix + str(pattern.pattern), inner)
        elif isinstance(pattern, URLPattern):
            route = prefix + str(pattern.pattern)
            yield f"{namespace}{pattern.name}" if pattern.name else route, route, pattern.pattern.converters


def excluded(key, route) -> bool:
    """Whether EXCLUDED names the route, by its key or (ending in ':' or '/') its namespace or prefix."""
    if key in INCLUDED:
        return False
    return any(
        key == name or name.endswith(":") and key.startswith(name) or route.startswith(name) for name in EXCLUDED
    )


def pages() -> dict:
    """Each page's route, by key, and whether it takes parameters."""
    return {key: bool(converters) for key, route, converters in routes() if not excluded(key, route)}


def page_paths(rows) -> dict:
    """Each page's URLs, with long_rows' objects for those that show one."""
    return {
        key: [reverse(key, args=args) for args in OBJECTS[key](rows)] if takes_parameters else [reverse(key)]
        for key, takes_parameters in pages().items()
    }


def test_it_names_every_route_a_page_or_an_exclusion():
    keys = {key for key, _, _ in routes()}
    assert set(OBJECTS) <= keys, "OBJECTS names routes the URL conf no longer has"
    assert {name for name in EXCLUDED if not name.endswith((":", "/"))} <= keys, "EXCLUDED names routes gone"
    unknown = {key for key, takes_parameters in pages().items() if takes_parameters and key not in OBJECTS}
    assert not unknown, "name the objects of these pages in OBJECTS, or exclude them in EXCLUDED"
    assert {"calls", "call", "servers", "tokens", "rules", "audit_event", "api-1:openapi-view"} <= set(pages())


def test_it_shows_every_page_to_someone(db):
    """Each page is one some visitor opens (no refusal, no redirect), so the test below checks it in the browser."""
    paths, shown = page_paths(make_long_rows()), set()
    # The admin opens most pages: asked first, they leave the others few to ask.
    for visitor in reversed(VISITORS):
        client = Client()
        if visitor:
            client.force_login(User.objects.get(username=visitor))
        shown |= {key for key, urls in paths.items() if key not in shown and client.get(urls[0]).status_code == 200}
    assert shown == set(paths), f"no visitor could open {set(paths) - shown}"


def statuses(visitor, urls) -> dict:
    """The status code of each URL's answer to the visitor's GET."""
    client = Client()
    if visitor:
        client.force_login(User.objects.get(username=visitor))
    return {url: client.get(url).status_code for url in urls}


# One test a visitor, so that the workers of `make test` share them.
@pytest.mark.parametrize("visitor", VISITORS, ids=lambda visitor: visitor or "signed-out")
def test_it_fits_every_page_at_1280_and_1440_without_serious_violations(live_console, open_browser, visitor):
    if not AXE.exists():
        pytest.skip(f"axe-core is not installed at {AXE} (make node-deps)")
    # The visitor's pages (200: not refused, not sent elsewhere), asked in this process: the browser renders only those.
    answers = statuses(visitor, [url for urls in page_paths(make_long_rows()).values() for url in urls])
    problems = [(url, "answers GET with 405: an action belongs in EXCLUDED") for url, s in answers.items() if s == 405]
    context = open_browser().new_context(viewport=VIEWPORT)
    # Injected by the browser into each document, so the page's Content-Security-Policy does not apply to it.
    context.add_init_script(path=AXE)
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.on("pageerror", lambda error: problems.append(("script error", str(error))))
    if visitor:
        sign_in(page, live_console, visitor)
    widths = [VIEWPORT, WIDE]  # first the width the last page was left at: one resize a page
    for url in [url for url, status in answers.items() if status == 200]:
        answer = page.goto(live_console + url)
        if answer.status != 200 or page.url != live_console + url:
            problems.append((url, "the browser was not shown it", answer.status, page.url))
            continue
        for viewport in widths:
            if page.viewport_size != viewport:
                page.set_viewport_size(viewport)
            misfits = page.evaluate(FITS)
            if misfits:
                problems.append((url, viewport["width"], misfits))
            violations = viewport == VIEWPORT and page.evaluate(SERIOUS)
            if violations:
                problems.append((url, "axe", violations))
        widths.reverse()
    assert not problems, "\n".join(map(str, problems))


# The focused element's ring colour and the background it is drawn on: the nearest ancestor's that is not clear.
RING = """() => {
  const element = document.activeElement;
  let behind = element;
  while (behind && getComputedStyle(behind).backgroundColor === "rgba(0, 0, 0, 0)") behind = behind.parentElement;
  return {
    ring: getComputedStyle(element).outlineColor,
    style: getComputedStyle(element).outlineStyle,
    behind: behind ? getComputedStyle(behind).backgroundColor : "rgb(255, 255, 255)",
  };
}"""


def contrast(first: str, second: str) -> float:
    """WCAG's contrast ratio of two computed colours, 'rgb(r, g, b)'."""

    def luminance(color):
        channels = [int(part) / 255 for part in color[color.index("(") + 1 : -1].split(",")[:3]]
        linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]

    light, dark = sorted([luminance(first), luminance(second)], reverse=True)
    return (light + 0.05) / (dark + 0.05)


def test_it_rings_keyboard_focus_at_3_to_1_on_the_navigation_and_the_page(live_console, open_browser):
    make_user("operator", *PEOPLE["operator"])
    page = open_browser().new_page(viewport=VIEWPORT)
    sign_in(page, live_console, "operator")
    page.goto(live_console + reverse("connect"))
    rings = []
    for _ in range(12):
        page.keyboard.press("Tab")
        rings.append(page.evaluate(RING) | {"name": page.evaluate("document.activeElement.textContent.trim()")})
    in_nav = [ring for ring in rings if ring["name"] in ("Queue", "Calls", "Catalog")]
    in_page = [ring for ring in rings if ring not in in_nav and ring["behind"] != "rgb(23, 32, 51)"]
    assert in_nav and in_page
    for ring in in_nav + in_page:
        assert ring["style"] != "none" and contrast(ring["ring"], ring["behind"]) >= 3, ring
