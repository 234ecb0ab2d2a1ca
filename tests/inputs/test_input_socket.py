"""Input requests pushed to operators' queue pages over the websocket, as the card the page would render."""

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import User

from approvals import roles
from approvals.inputs import requests
from approvals.inputs.models import InputRequest
from tests.fixtures.sockets import open_socket, signed_in
from tests.inputs.test_elicitation_protocol import EVERY_FIELD

pytestmark = pytest.mark.django_db(transaction=True)


async def test_it_pushes_a_new_request_with_its_form_then_who_answered_it(person, call):
    cookie = await signed_in(person, "ann", roles.OPERATOR)
    socket, connected = await open_socket(cookie)
    assert connected
    request = await sync_to_async(requests.open_request)(
        call, "elicitation/create", {"message": "Fill in", "requestedSchema": EVERY_FIELD}, "operator"
    )
    pushed = await socket.receive_json_from(timeout=5)
    assert pushed["event"] == "input.pending" and pushed["input_id"] == request.pk
    assert f'data-input-card="{request.pk}"' in pushed["input_html"] and ">Accept</button>" in pushed["input_html"]
    assert 'name="csrfmiddlewaretoken"' in pushed["input_html"] and "html" not in pushed

    ann = await User.objects.aget(username="ann")
    await sync_to_async(requests.answer)(request.pk, ann, "decline")
    answered = await socket.receive_json_from(timeout=5)
    assert answered["event"] == "input.answered"
    assert "Declined by ann." in answered["input_html"] and "<form" not in answered["input_html"]
    assert (await InputRequest.objects.aget()).status == InputRequest.Status.DECLINED
    await socket.disconnect()


async def test_it_pushes_no_card_to_pages_that_show_none(person, call):
    cookie = await signed_in(person, "ann", roles.OPERATOR)
    socket, connected = await open_socket(cookie, query="view=recent")
    assert connected
    await sync_to_async(requests.open_request)(
        call, "elicitation/create", {"message": "?", "requestedSchema": EVERY_FIELD}, "operator"
    )
    assert await socket.receive_nothing(timeout=0.5)
    await socket.disconnect()


async def test_it_pushes_the_calls_page_again_with_what_the_server_asked(person, call):
    cookie = await signed_in(person, "ann", roles.OPERATOR)
    socket, connected = await open_socket(cookie, query=f"view=call&id={call.pk}")
    assert connected
    await sync_to_async(requests.open_request)(
        call, "elicitation/create", {"message": "Which size?", "requestedSchema": EVERY_FIELD}, "operator"
    )
    pushed = await socket.receive_json_from(timeout=5)
    assert pushed["event"] == "input.pending" and pushed["call_id"] == call.pk
    assert "What the server asked during the call" in pushed["html"] and "Which size?" in pushed["html"]
    assert f'value="/calls/{call.pk}/"' in pushed["html"]
    await socket.disconnect()
