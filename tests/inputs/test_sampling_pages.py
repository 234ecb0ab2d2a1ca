"""A sampling request routed to operators, in Django's test client: the conversation shown safely, a reply posted."""

import base64

from approvals import roles
from approvals.inputs import requests
from approvals.inputs.models import InputRequest
from tests.api.conftest import bearer, key_of

HOSTILE = "<img src=x onerror=alert(1)>"
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 16).decode()
PROMPT = {
    "messages": [
        {"role": "user", "content": {"type": "text", "text": f"Describe this picture {HOSTILE}"}},
        {"role": "user", "content": [{"type": "image", "data": PNG, "mimeType": "image/png"}]},
        {"role": "assistant", "content": {"type": "text", "text": "A grey square."}},
        {"role": "user", "content": {"type": "audio", "data": PNG, "mimeType": "text/html"}},
    ],
    "systemPrompt": f"You are terse. {HOSTILE}",
    "maxTokens": 64,
    "includeContext": "thisServer",
    "modelPreferences": {"hints": [{"name": "claude-3-sonnet"}], "intelligencePriority": 0.8},
}


def ask(call, params=PROMPT) -> InputRequest:
    return requests.open_request(call, "sampling/createMessage", params, InputRequest.Route.OPERATOR)


def card_of(page: str, request: InputRequest) -> str:
    return page[page.index(f'data-input-card="{request.pk}"') :]


def test_it_shows_the_conversation_a_server_hands_a_model_with_its_markup_escaped(call, login):
    request = ask(call)
    page = login(roles.OPERATOR).get("/queue/").content.decode()

    card = card_of(page, request)
    assert "Billing asks a language model for a reply" in card
    assert HOSTILE not in page and "Describe this picture &lt;img src=x onerror=alert(1)&gt;" in card
    assert "You are terse. &lt;img" in card and "64 tokens" in card and "thisServer" in card
    assert card.count('data-sampling-role="user"') == 2 and card.count('data-sampling-role="assistant"') == 1
    assert f'src="/inputs/{request.pk}/media/1/"' in card
    assert "Audio of a type the console does not play." in card
    assert "claude-3-sonnet" in card and "intelligencePriority" in card
    assert 'name="reply"' in card and ">Send reply</button>" in card and 'value="cancel"' not in card


def test_it_serves_a_sampling_requests_image_under_its_own_type_and_nothing_it_does_not_show(call, login):
    request = ask(call)
    operator = login(roles.OPERATOR)

    image = operator.get(f"/inputs/{request.pk}/media/1/")
    assert image.status_code == 200 and image["Content-Type"] == "image/png"
    assert image.content == base64.b64decode(PNG)
    assert operator.get(f"/inputs/{request.pk}/media/3/").status_code == 404
    assert operator.get(f"/inputs/{request.pk}/media/0/").status_code == 404


def test_it_sends_an_operators_reply_and_shows_it_on_the_card(call, login):
    request = ask(call)
    operator = login(roles.OPERATOR, username="olivia")

    empty = operator.post(f"/inputs/{request.pk}/answer/", {"action": "accept", "reply": " ", "next": "/queue/"})
    sent = operator.post(f"/inputs/{request.pk}/answer/", {"action": "accept", "reply": "A <b>grey</b> square."})

    assert empty.status_code == 400 and "Write the reply the model would give, or decline." in empty.content.decode()
    assert sent.status_code == 302
    request.refresh_from_db()
    assert request.status == InputRequest.Status.ANSWERED
    assert request.answer["content"] == {"type": "text", "text": "A <b>grey</b> square."}
    assert request.answer["model"] == "operator:olivia"
    card = operator.get(f"/inputs/{request.pk}/").content.decode()
    assert "Replied by olivia." in card and "A &lt;b&gt;grey&lt;/b&gt; square." in card


def test_it_answers_sampling_through_the_api_with_the_replys_text_or_a_decline(call, db, client):
    replied, declined = ask(call), ask(call)
    key = bearer(key_of("otto", roles.OPERATOR))

    def answer(request, body):
        return client.post(f"/api/v1/inputs/{request.pk}/answer", body, content_type="application/json", headers=key)

    cancel = answer(replied, {"action": "cancel"})
    reply = answer(replied, {"action": "accept", "content": {"text": "Done."}})
    decline = answer(declined, {"action": "decline"})

    assert cancel.status_code == 422
    assert reply.status_code == 200 and decline.status_code == 200
    replied.refresh_from_db(), declined.refresh_from_db()
    assert replied.answer["content"]["text"] == "Done." and replied.answer["model"] == "operator:otto"
    assert declined.answer == {"error": {"code": -1, "message": "User rejected sampling request"}}
    shown = client.get(f"/api/v1/inputs/{replied.pk}", headers=key).json()
    assert shown["method"] == "sampling/createMessage" and shown["params"]["maxTokens"] == 64
