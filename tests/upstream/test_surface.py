"""Resources, resource templates, prompts and completion from a server built with the official SDK, in both eras."""

import base64
import sys
from contextlib import AsyncExitStack

import pytest
import pytest_asyncio

from approvals.upstream import ServerSpec, UpstreamError, open_session
from tests.fixtures.servers import REPO, SERVERS, scenario_spec

# A stdio server negotiates 2026-07-28 unless the spec remembers a legacy revision, which is then tried first.
both_eras = pytest.mark.parametrize("revision", ["", "2025-11-25"], ids=["modern", "legacy"])
# The module's tests share one event loop, in which the sessions the `surface` fixture opens live.
pytestmark = pytest.mark.asyncio(loop_scope="module")


def surface_spec(revision="", **changes) -> ServerSpec:
    fields = {
        "name": "surface",
        "transport": "stdio",
        "command": (sys.executable, str(SERVERS / "surface_server.py"), "stdio"),
        "cwd": str(REPO),
        "timeout": 20,
        "revision": revision,
    }
    return ServerSpec(**(fields | changes))


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def surface():
    """`surface(revision)`: the session of that era the module's tests share, opened by the first to ask. Starting
    the server is most of what a test reading from it costs, and nothing they ask changes what it serves."""
    async with AsyncExitStack() as stack:
        sessions = {}

        async def session(revision):
            if revision not in sessions:
                sessions[revision] = await stack.enter_async_context(open_session(surface_spec(revision)))
            return sessions[revision]

        yield session


@both_eras
async def test_it_lists_every_resource_following_the_cursor_across_pages(surface, revision):
    session = await surface(revision)
    assert session.identity.era == ("legacy" if revision else "modern")
    resources = await session.list_resources()
    uris = [resource["uri"] for resource in resources]
    assert len(uris) == 28 == len(set(uris))
    assert {"docs://readme", "docs://logo.png", "notes://n/0", "notes://n/24"} <= set(uris)


@both_eras
async def test_it_lists_resource_templates_and_prompts_with_their_arguments(surface, revision):
    session = await surface(revision)
    templates = await session.list_resource_templates()
    prompts = {prompt["name"]: prompt for prompt in await session.list_prompts()}
    assert [template["uriTemplate"] for template in templates] == ["notes://by-topic/{topic}"]
    assert set(prompts) == {"review_code", "greeting"}
    arguments = {argument["name"]: argument.get("required") for argument in prompts["review_code"]["arguments"]}
    assert arguments == {"code": True, "language": False}


@both_eras
async def test_it_reads_text_and_blob_contents_exactly_as_served(surface, revision):
    session = await surface(revision)
    text = await session.read_resource("docs://readme")
    blob = await session.read_resource("docs://logo.png")
    templated = await session.read_resource("notes://by-topic/beta")
    assert text["contents"][0]["text"] == "A server of resources and prompts."
    assert base64.b64decode(blob["contents"][0]["blob"]) == bytes(range(256))
    assert templated["contents"][0]["text"] == "notes about beta"


@both_eras
async def test_it_gets_a_prompt_with_its_arguments(surface, revision):
    session = await surface(revision)
    prompt = await session.get_prompt("review_code", {"code": "print(1)", "language": "rust"})
    message = prompt["messages"][0]
    assert message["role"] == "user"
    assert message["content"]["text"] == "Please review this rust code:\nprint(1)"


@both_eras
async def test_it_completes_a_prompt_argument_and_a_template_variable(surface, revision):
    session = await surface(revision)
    languages = await session.complete(
        {"type": "ref/prompt", "name": "review_code"}, {"name": "language", "value": "p"}
    )
    topics = await session.complete(
        {"type": "ref/resource", "uri": "notes://by-topic/{topic}"}, {"name": "topic", "value": "g"}
    )
    assert languages["completion"]["values"] == ["perl", "php", "python"]
    assert topics["completion"]["values"] == ["gamma"]


@both_eras
async def test_it_raises_the_servers_error_for_an_unknown_uri_and_a_missing_argument(surface, revision):
    session = await surface(revision)
    with pytest.raises(UpstreamError) as unknown:
        await session.read_resource("docs://nowhere")
    with pytest.raises(UpstreamError) as missing:
        await session.get_prompt("review_code", {})
    assert unknown.value.code is not None and not unknown.value.retryable
    assert "docs://nowhere" in unknown.value.message
    assert missing.value.code is not None


async def test_it_refuses_a_read_result_larger_than_its_cap():
    async with open_session(surface_spec(result_max_bytes=200)) as session:
        with pytest.raises(UpstreamError) as caught:
            await session.read_resource("docs://logo.png")
    assert "more than the 200 allowed" in caught.value.message


async def test_it_caps_the_pages_of_a_resource_listing():
    async with open_session(surface_spec(list_max_pages=2)) as session:
        with pytest.raises(UpstreamError) as caught:
            await session.list_resources()
    assert "resources/list has more than list_max_pages (2)" in caught.value.message


async def test_it_refuses_malformed_contents_and_messages():
    async with open_session(scenario_spec("malformed-surface")) as session:
        with pytest.raises(UpstreamError) as read:
            await session.read_resource("bad://both")
        with pytest.raises(UpstreamError) as prompt:
            await session.get_prompt("bad", {})
        with pytest.raises(UpstreamError) as completion:
            await session.complete({"type": "ref/prompt", "name": "bad"}, {"name": "x", "value": ""})
    assert "contents[0] must hold exactly one of text and blob" in read.value.message
    assert "messages[0].role must be 'user' or 'assistant'" in prompt.value.message
    assert "completion.values must be a list of strings" in completion.value.message


async def test_it_reports_a_dead_server_as_a_retryable_error():
    async with open_session(surface_spec()) as session:
        await session.list_prompts()
        await session._transport.close()
        with pytest.raises(UpstreamError) as caught:
            await session.read_resource("docs://readme")
    assert caught.value.retryable
