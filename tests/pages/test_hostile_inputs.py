"""Every URL the console serves, and every form on its pages, given hostile values by every role: never a 500.

The walk takes its URLs from Django's resolver, so a page added later is walked too. Each URL is
requested with each hostile value in its path (where it takes one), in its query string under
every name its page's forms use and the common paging names, and posted as every field of those
forms, and as a JSON body. The values are those that broke consoles before: digits that Python calls
digits but int() refuses, numbers past any column, NUL, JSON nested past any parser's recursion.
"""

import re
from html.parser import HTMLParser
from urllib.parse import urlencode

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from approvals import roles
from approvals.calls import lifecycle
from approvals.forms.fields import whole_number
from approvals.policy import rules
from approvals.protocol import revisions
from approvals.signin import throttle
from approvals.tokens.context import ClientContext
from approvals.tokens.credentials import create_token
from approvals.webhooks.endpoints import create_endpoint
from tests.fixtures.catalog import make_server, make_tool
from tests.fixtures.people import make_user

DEEP = 3_000  # past the recursion limit of json and of Python
HOSTILE = [
    "²",  # a digit to str.isdigit, not to int()
    "١٢",  # Arabic-Indic digits, which int() reads as 12
    "9" * 30,  # past any integer column
    "a\x00b",  # PostgreSQL refuses NUL in text
    '[{"a":' * DEEP,  # arrays and objects nested past any parser's recursion
]
# In a URL's path: its converters take digits and slugs, or anything.
HOSTILE_IN_PATH = ["²", "9" * 30, "a\x00b"]
# Characters a query string carries as they are: escaped, the nested JSON's 18,000 of them, under every name of a
# page, cost the test's client and the console's parser more than the rest of the walk; either way the view reads the
# same values.
LEFT_AS_THEY_ARE = '[]{}":'
# Query names besides those of the page's own forms: the paging and filters of every list.
QUERY_NAMES = ["page", "cursor", "after", "before", "limit", "status", "q", "id", "from", "to", "next"]
ROLES = {"admin": (roles.ADMIN,), "operator": (roles.OPERATOR,), "auditor": (roles.AUDITOR,), "nobody": ()}
SIGN_IN = ("/login/", "/admin/login/")
# Where the walk's requests come from. Its hostile sign-in forms are failed tries, and the counters outlive the test:
# counted against the loopback address, they would lock out the live console's later sign-ins in this process.
WALKER_ADDRESS = "192.0.2.77"


def walk(patterns, prefix=""):
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            yield from walk(pattern.url_patterns, prefix + str(pattern.pattern))
        else:
            assert isinstance(pattern, URLPattern)
            yield prefix + str(pattern.pattern)


def concrete(route: str, value) -> str:
    """The route with `value` for each of its parameters, a regex's alternatives by their first."""
    route = re.sub(r"\(\?P<\w+>(\w+)\|[^)]*\)", r"\1", route)
    route = re.sub(r"\(\?P<\w+>[^)]*\)", "x", route).replace("^", "").replace("$", "")
    return "/" + re.sub(r"<(?:\w+:)?(\w+)>", lambda match: value(match[1]) if callable(value) else value, route)


class FieldNames(HTMLParser):
    def __init__(self):
        super().__init__()
        self.names = set()

    def handle_starttag(self, tag, attrs):
        name = dict(attrs).get("name")
        if tag in ("input", "select", "textarea", "button") and name and name != "csrfmiddlewaretoken":
            self.names.add(name)


def field_names(response) -> set[str]:
    if "html" not in response.get("Content-Type", ""):
        return set()
    parser = FieldNames()
    parser.feed(response.content.decode(errors="replace"))
    return parser.names


@pytest.fixture
def rows(db):
    """One row of each kind the pages show, so that each page with a form shows it."""
    server = make_server("Shop", slug="shop", tool_prefix="shop_")
    tool = make_tool(server, "refund", inputSchema={"type": "object", "properties": {"n": {"type": "integer"}}})
    token = create_token("agent")[0]
    call, _ = lifecycle.receive_call(ClientContext(token, revisions.MODERN, "2026-07-28"), tool, {"n": 1}, 1, None)
    rule = rules.create_rule(rules.RuleRequest("ask", tool_glob="nothing*", name="held"))
    owner = make_user("owner", roles.ADMIN)
    endpoint, _ = create_endpoint(
        {"url": "https://hooks.example/in", "console_url": "https://console.example", "events": ["call.pending"]},
        owner,
    )
    return {
        "call": call.pk,
        "tool": tool.pk,
        "rule": rule.pk,
        "token": token.pk,
        "clienttoken": token.pk,
        "webhook": endpoint.pk,
        "policyrule": rule.pk,
        "server": server.pk,
        "user": owner.pk,
        "slug": server.slug,
        "kind": "tools",
    }


# The row a route's parameter names, by the route's start.
ROW_OF_ROUTE = {
    "queue/": "call",
    "calls/": "call",
    "audit/calls/": "call",
    "api/v1/calls/": "call",
    "catalog/tools/": "tool",
    "review/tools/": "tool",
    "review/": "tool",
    "policy/rules/": "rule",
    "tokens/": "token",
    "webhooks/": "webhook",
    "people/": "user",
}


def existing(rows: dict, route: str):
    """A route's parameters filled with rows that exist, so that its page shows its forms."""

    def value(name):
        if name in rows:
            return str(rows[name])
        if route.startswith("admin/"):
            return str(rows.get(route.split("/")[2], 1))
        row = next((row for start, row in ROW_OF_ROUTE.items() if route.startswith(start)), None)
        return str(rows[row]) if row else "1"

    return value


def refused(response) -> bool:
    return response.status_code == 403 or response.get("Location", "").startswith(SIGN_IN)


def requests_of(client, route: str, url: str, names: set[str]):
    """Each hostile request to one route: (method, URL, a function that sends it)."""
    for value in HOSTILE:
        data = dict.fromkeys(names, value)
        yield "GET", url, value, lambda data=data: client.get(f"{url}?{urlencode(data, safe=LEFT_AS_THEY_ARE)}")
        yield "POST", url, value, lambda data=data: client.post(url, data)
        if route.startswith(("api/", "mcp")):
            yield "JSON", url, value, lambda value=value: client.post(url, value, content_type="application/json")
    if "<" in route or "(?P" in route:
        for value in HOSTILE_IN_PATH:
            target = concrete(route, value)
            yield "GET", target, value, lambda target=target: client.get(target)
            yield "POST", target, value, lambda target=target: client.post(target)


# NUL and numbers past a column break PostgreSQL where SQLite takes them: the walk runs on the services when it can.
@pytest.mark.services(once=True)
@pytest.mark.timeout(300)
@pytest.mark.parametrize("role", ROLES)
def test_it_answers_every_url_and_form_with_hostile_values_without_a_server_error(rows, role):
    routes = list(walk(get_resolver().url_patterns))
    assert len(routes) > 100 and "policy/try/" in routes and "api/v1/calls" in routes
    # Admins are staff, as the demo's is: Django's admin is theirs to walk too.
    walker = make_user(f"walker-{role}", *ROLES[role], is_staff=role == "admin")
    client = Client(raise_request_exception=False, REMOTE_ADDR=WALKER_ADDRESS)
    failures = []
    try:
        for route in routes:
            client.force_login(walker)  # again: the walk signs out at logout/
            url = concrete(route, existing(rows, route))
            shown = client.get(url)
            if refused(shown) and refused(client.post(url)):
                continue  # the role may not: its access check comes before anything reads the request
            names = field_names(shown) | set(QUERY_NAMES)
            for method, target, value, send in requests_of(client, route, url, names):
                status = send().status_code
                if status >= 500:
                    failures.append((method, target[:80], value[:12], status))
    finally:
        [(_, stem, _)] = throttle.subjects("", WALKER_ADDRESS)
        throttle.counters().delete_many([f"{stem}:tries", f"{stem}:locked"])
    assert failures == [], "\n".join(map(repr, failures))


@pytest.mark.parametrize("text", ["²", "١٢", "𝟗", "12" * 7, "-1", " "])
def test_it_takes_a_page_number_or_cursor_only_in_ascii_digits_that_fit(text):
    assert whole_number(text) is None


def test_it_reads_a_whole_number_in_ascii_digits():
    assert (whole_number(" 42 "), whole_number("0"), whole_number("9" * 18, most_digits=18)) == (42, 0, int("9" * 18))


@pytest.mark.parametrize("page", ["queue", "calls", "audit", "my_decisions"])
def test_it_shows_the_first_page_for_a_page_number_or_cursor_in_other_digits(rows, page, login):
    client = login(roles.ADMIN, roles.OPERATOR, roles.AUDITOR)
    for digits in ("²", "١٢", "9" * 30):
        response = client.get(reverse(page), {"page": digits, "after": digits, "before": digits})
        assert response.status_code == 200


def test_it_tells_of_json_nested_too_deeply_on_the_try_page_and_the_rule_form(rows, login):
    client = login(roles.ADMIN)
    deep = "[" * DEEP
    page = client.get(reverse("policy_try"), {"tool": rows["tool"], "token": rows["token"], "arguments": deep})
    assert page.status_code == 200 and "nested too deeply" in page.content.decode()
    form = client.post(reverse("rule_add"), {"action": "allow", "tool_glob": "*", "conditions": deep})
    assert form.status_code == 200 and "nested too deeply" in form.content.decode()


def test_it_returns_to_the_queue_from_a_decision_whose_next_is_no_path(rows, login):
    client = login(roles.OPERATOR)
    response = client.post(reverse("call_decide", args=[rows["call"]]), {"decision": "deny", "next": "-1"})
    assert response.status_code == 302 and response["Location"] == reverse("queue")


def test_it_refuses_a_nul_in_a_query_or_form_value_with_400(rows, login):
    client = login(roles.ADMIN, roles.OPERATOR)
    assert client.get(reverse("queue"), {"tool": "a\x00b"}).status_code == 400
    assert client.post(reverse("token_add"), {"name": "x\x00"}).status_code == 400
    assert client.get(reverse("queue"), {"tool": "shop_refund"}).status_code == 200
