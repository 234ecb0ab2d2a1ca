"""The operator's side in Django's test client: a card per request in the queue, every field type, the answer posted."""

import re

import pytest

from approvals import roles
from approvals.catalog.models import Server
from approvals.inputs import requests
from approvals.inputs.models import InputRequest
from tests.fixtures.catalog import make_server
from tests.fixtures.people import make_user
from tests.inputs.test_elicitation_protocol import EVERY_FIELD

HOSTILE = "<img src=x onerror=alert(1)>"


def ask(call, params, route=InputRequest.Route.OPERATOR):
    return requests.open_request(call, "elicitation/create", params, route)


def form_post(request, action="accept", **fields):
    prefix = f"input-{request.pk}-"
    return {"action": action, "next": "/queue/", **{prefix + name: value for name, value in fields.items()}}


def test_it_shows_a_pending_form_in_the_queue_with_every_field_type(call, login):
    request = ask(call, {"message": f"Please fill this in {HOSTILE}", "requestedSchema": EVERY_FIELD})
    page = login(roles.OPERATOR).get("/queue/").content.decode()

    card = page[page.index(f'data-input-card="{request.pk}"') :]
    assert "Billing asks for input" in card and "billing_refund" in card and "agent 7" in card
    assert "Please fill this in &lt;img src=x onerror=alert(1)&gt;" in card and HOSTILE not in page
    name = f"input-{request.pk}-"
    for field, html in {
        "name": 'type="text"',
        "email": 'type="email"',
        "homepage": 'type="url"',
        "born": 'type="date"',
        "meeting": 'type="datetime-local"',
        "age": 'type="number"',
        "score": 'type="number"',
        "agree": 'type="checkbox"',
    }.items():
        assert re.search(
            rf'<input[^>]*{html}[^>]*name="{name}{field}"|<input[^>]*name="{name}{field}"[^>]*{html}', card
        ), field
    assert re.search(
        rf'name="{name}name"[^>]*maxlength="20"[^>]*minlength="2"|maxlength="20"[^>]*minlength="2"[^>]*name="{name}name"',
        card,
    )
    assert re.search(rf'name="{name}age"[^>]*value="30"', card) and 'max="99"' in card and 'min="18"' in card
    assert '<option value="dog">Dogs</option>' in card and '<option value="h2">Batman</option>' in card
    assert re.search(r'<option value="red" selected>red</option>', card)
    assert re.search(rf'type="checkbox" name="{name}fish" value="f1"[^>]*checked', card)
    assert card.count('<span class="req" aria-hidden="true">required</span>') == 2
    assert "Full name" in card and ">Name" in card
    for label in ("Accept", "Decline", "Cancel"):
        assert f'value="{label.lower()}"' in card and f">{label}</button>" in card


def test_it_forwards_an_accepted_form_as_json_of_the_schemas_types(call, login):
    request = ask(call, {"message": "?", "requestedSchema": EVERY_FIELD})
    response = login(roles.OPERATOR).post(
        f"/inputs/{request.pk}/answer/",
        form_post(
            request,
            name="Ada",
            email="ada@example.com",
            homepage="https://ada.example",
            born="1815-12-10",
            meeting="2030-01-02T09:30:00",
            age="36",
            score="7.5",
            agree="on",
            color="green",
            pet="dog",
            hero="h2",
            tools=["saw", "file"],
            fish=["f2"],
        ),
    )
    request.refresh_from_db()
    assert response.status_code == 302 and response["Location"] == "/queue/"
    assert request.status == InputRequest.Status.ANSWERED and request.answered_by_name == roles.OPERATOR
    assert request.answer == {
        "action": "accept",
        "content": {
            "name": "Ada",
            "email": "ada@example.com",
            "homepage": "https://ada.example",
            "born": "1815-12-10",
            "meeting": "2030-01-02T09:30:00+00:00",
            "age": 36,
            "score": 7.5,
            "agree": True,
            "color": "green",
            "pet": "dog",
            "hero": "h2",
            "tools": ["saw", "file"],
            "fish": ["f2"],
        },
    }


@pytest.mark.parametrize(
    "fields, error",
    [
        ({"name": "A", "email": "ada@example.com"}, "at least 2 characters"),
        ({"name": "Ada", "email": "nope"}, "valid email"),
        ({"name": "Ada", "email": "ada@example.com", "age": "17"}, "greater than or equal to 18"),
        ({"name": "Ada", "email": "ada@example.com", "tools": ["saw", "drill", "file"]}, "Choose at most 2."),
        ({"name": "Ada", "email": "ada@example.com", "born": "1815-13-40"}, "valid date"),
        ({"email": "ada@example.com"}, "This field is required."),
    ],
)
def test_it_shows_the_form_again_with_what_does_not_validate(call, login, fields, error):
    request = ask(call, {"message": "?", "requestedSchema": EVERY_FIELD})
    response = login(roles.OPERATOR).post(f"/inputs/{request.pk}/answer/", form_post(request, **fields))
    assert response.status_code == 400
    assert error in response.content.decode()
    request.refresh_from_db()
    assert request.status == InputRequest.Status.PENDING


@pytest.mark.parametrize(
    "action, status", [("decline", InputRequest.Status.DECLINED), ("cancel", InputRequest.Status.CANCELLED)]
)
def test_it_declines_or_cancels_without_filling_the_form(call, login, action, status):
    request = ask(call, {"message": "?", "requestedSchema": EVERY_FIELD})
    response = login(roles.OPERATOR).post(f"/inputs/{request.pk}/answer/", form_post(request, action))
    request.refresh_from_db()
    assert response.status_code == 302
    assert (request.status, request.answer) == (status, {"action": action})


def test_it_shows_a_url_in_full_with_its_domain_set_apart_and_takes_a_confirmation(call, login):
    url = "https://auth.example.com/consent?state=xyz&scope=read"
    request = ask(call, {"mode": "url", "message": "Grant access", "url": url, "elicitationId": "e1"})
    operator = login(roles.OPERATOR)
    page = operator.get(f"/inputs/{request.pk}/").content.decode()
    assert "asks someone to open a link" in page
    assert '<code class="url" data-input-url>https://auth.example.com/consent?state=xyz&amp;scope=read</code>' in page
    assert '<strong class="domain" data-input-domain>auth.example.com</strong>' in page
    assert ">I completed it</button>" in page
    operator.post(f"/inputs/{request.pk}/answer/", {"action": "accept"})
    request.refresh_from_db()
    assert request.answer == {"action": "accept"}


def test_it_shows_a_refused_request_and_why_in_the_queue(call, login):
    requests.record_unanswered(
        call,
        "elicitation/create",
        {"message": "Where?", "requestedSchema": {}},
        InputRequest.Status.REFUSED,
        "the server asked outside what elicitation allows: nested",
    )
    page = login(roles.OPERATOR).get("/queue/").content.decode()
    assert (
        "Refused, and answered upstream as a decline: the server asked outside what elicitation allows: nested" in page
    )


def test_it_shows_a_request_passed_to_the_client_without_a_form(call, login):
    request = ask(call, {"message": "?", "requestedSchema": EVERY_FIELD}, route=InputRequest.Route.CLIENT)
    page = login(roles.OPERATOR).get("/queue/").content.decode()
    card = page[page.index(f'data-input-card="{request.pk}"') :]
    assert "passed to the client" in card and "<form" not in card.split("</article>")[0]


def test_it_lets_an_auditor_watch_but_not_answer(call, login):
    request = ask(call, {"message": "?", "requestedSchema": EVERY_FIELD})
    auditor = login(roles.AUDITOR)
    page = auditor.get("/queue/").content.decode()
    assert "Waiting for an operator." in page and 'name="action"' not in page
    assert auditor.post(f"/inputs/{request.pk}/answer/", {"action": "decline"}).status_code == 403


def test_it_tells_a_late_operator_who_answered_first(call, login):
    request = ask(call, {"message": "?", "requestedSchema": EVERY_FIELD})
    first = make_user("ann", roles.OPERATOR)
    requests.answer(request.pk, first, "decline")
    response = login(roles.OPERATOR).post(f"/inputs/{request.pk}/answer/", form_post(request, "cancel"), follow=True)
    assert "Already declined by ann." in response.content.decode()


def test_it_lets_an_admin_choose_who_answers_a_servers_input_requests(login, db):
    server = make_server("Billing")
    admin = login(roles.ADMIN)
    form = admin.get(f"/servers/{server.slug}/edit/").content.decode()
    assert 'value="client_if_capable"' in form and re.search(r'value="operator"[^>]*checked', form)
    data = {
        "name": "Billing",
        "transport": "http",
        "url": server.url,
        "tool_prefix": server.tool_prefix,
        "enabled": "on",
        "input_routing": "client_if_capable",
    }
    assert admin.post(f"/servers/{server.slug}/edit/", data).status_code == 302
    server.refresh_from_db()
    assert server.input_routing == Server.InputRouting.CLIENT_IF_CAPABLE
    assert (
        "The client answers when it declared the capability" in admin.get(f"/servers/{server.slug}/").content.decode()
    )


def test_it_lists_what_the_server_asked_on_the_calls_page_and_answers_from_there(call, login):
    request = ask(call, {"message": "Which size?", "requestedSchema": EVERY_FIELD})
    operator = login(roles.OPERATOR)
    page = operator.get(f"/calls/{call.pk}/").content.decode()
    assert "What the server asked during the call" in page and "Which size?" in page
    response = operator.post(
        f"/inputs/{request.pk}/answer/", {**form_post(request, "decline"), "next": f"/calls/{call.pk}/"}
    )
    assert response["Location"] == f"/calls/{call.pk}/"
    assert "Declined by operator." in operator.get(f"/calls/{call.pk}/").content.decode()


def test_it_leaves_a_required_choice_without_a_default_unchosen(call, login):
    schema = {"type": "object", "properties": {"size": {"type": "string", "enum": ["s", "l"]}}, "required": ["size"]}
    request = ask(call, {"message": "Which size?", "requestedSchema": schema})
    operator = login(roles.OPERATOR)
    card = operator.get(f"/inputs/{request.pk}/").content.decode()
    assert re.search(r'<select name="input-\d+-size"[^>]*required[^>]*>\s*<option value="" selected>—</option>', card)
    response = operator.post(f"/inputs/{request.pk}/answer/", form_post(request))
    assert response.status_code == 400 and "This field is required." in response.content.decode()


def test_it_answers_the_queues_script_in_json_the_answer_the_loser_and_a_form_to_correct(call, login):
    operator = login(roles.OPERATOR)
    ask_name = {"message": "Name?", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}
    request = ask(call, {**ask_name, "requestedSchema": {**ask_name["requestedSchema"], "required": ["name"]}})
    url, json_only = f"/inputs/{request.pk}/answer/", {"HTTP_ACCEPT": "application/json"}

    wrong = operator.post(url, form_post(request), **json_only)
    assert wrong.status_code == 400 and wrong.json()["message"] == "Some fields need another look."
    assert "<form" in wrong.json()["form_html"] and "The answer was not sent:" in wrong.json()["form_html"]
    assert InputRequest.objects.get(pk=request.pk).status == InputRequest.Status.PENDING

    sent = operator.post(url, form_post(request, name="Ada"), **json_only)
    assert sent.status_code == 200
    assert sent.json() == {"input_id": request.pk, "status": "answered", "message": "Answered.", "level": "success"}

    late = operator.post(url, form_post(request, action="decline"), **json_only)
    assert late.status_code == 409 and late.json()["status"] == "answered" and late.json()["level"] == "warning"
