"""The OpenAPI document: valid OpenAPI 3, true to every answer, rendered by a page that loads nothing from elsewhere."""

import re

import httpx
import pytest
from django.contrib.staticfiles import finders
from openapi_spec_validator import validate

from tests.api.conftest import bearer, key_of
from tests.api.schemas import check_answer, filled_path, operations, sample

OPENAPI = "/api/v1/openapi.json"


@pytest.fixture
def document(admin_key, live_console):
    return httpx.get(live_console + OPENAPI, headers=bearer(admin_key)).json()


def test_it_serves_a_valid_openapi_3_document(document):
    validate(document)
    assert document["openapi"].startswith("3.")
    assert {"/api/v1/queue", "/api/v1/calls/{call_id}/decision", "/api/v1/events"} <= set(document["paths"])


def test_it_answers_requests_made_from_the_document_as_the_document_says(document, held, admin_key, live_console):
    call, asked = held
    values = {"call_id": call.pk, "input_id": asked.pk}
    checked, problems = [], []
    with httpx.Client(base_url=live_console, timeout=10) as http:
        for path, method, operation in operations(document):
            url = filled_path(path, values)
            parameters = [p for p in operation.get("parameters", []) if p["in"] in ("query", "header")]
            # Each parameter set to a value of its type, not its default, so that every filter is exercised.
            filled = {p["name"]: sample(document, without_default(p["schema"])) for p in parameters}
            body = operation.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
            json_body = sample(document, body) if body else None
            attempts = [
                ("bare", {}, {}, bearer(admin_key)),
                ("every parameter", {k: v for k, v in filled.items() if k != "Last-Event-ID"}, {}, bearer(admin_key)),
                ("no credentials", {}, {}, {}),
            ]
            if body:
                attempts.append(("a body that is not JSON", {}, {}, bearer(admin_key)))
            if "Last-Event-ID" in filled:
                attempts.append(("resuming", {}, {"Last-Event-ID": filled["Last-Event-ID"]}, bearer(admin_key)))
            for label, params, headers, auth in attempts:
                request = http.build_request(method, url, params=params, headers={**headers, **auth}, json=json_body)
                if label == "a body that is not JSON":
                    request = http.build_request(
                        method, url, headers={**auth, "Content-Type": "application/json"}, content=b"{"
                    )
                with http.stream(request.method, request.url, headers=request.headers, content=request.content) as r:
                    media = r.headers.get("content-type", "")
                    answer = r.json() if media.startswith("application/json") and r.read() else None
                    problem = check_answer(document, operation, r.status_code, media, answer)
                if problem:
                    problems.append(f"{method} {path} ({label}): {problem}")
                checked.append((path, method, label, r.status_code))
    assert not problems, "\n".join(problems)
    assert {(p, m) for p, m, _, _ in checked} == {(p, m) for p, m, _ in operations(document)}
    assert {c[3] for c in checked if c[2] == "no credentials"} == {401}


def without_default(schema: dict) -> dict:
    return {key: value for key, value in schema.items() if key != "default"}


def test_it_renders_the_document_with_files_of_its_own(admin_key, live_console):
    page = httpx.get(live_console + "/api/v1/docs", headers=bearer(admin_key))

    assert page.status_code == 200
    assert not re.findall(r"(?:https?:)?//[\w.-]+", page.text.replace(live_console, ""))
    scripts = re.findall(r'<script src="([^"]+)"', page.text) + re.findall(r'<link[^>]+href="([^"]+)"', page.text)
    assert scripts and all(s.startswith("/static/") for s in scripts)
    assert all(finders.find(s.removeprefix("/static/")) for s in scripts)
    assert OPENAPI in page.text


def test_it_sends_a_visitor_without_a_role_or_sign_in_away_from_the_document(transactional_db, live_console):
    roleless = key_of("nobody")
    assert httpx.get(live_console + OPENAPI).status_code == 302
    assert httpx.get(live_console + OPENAPI, headers=bearer(roleless)).status_code == 403
