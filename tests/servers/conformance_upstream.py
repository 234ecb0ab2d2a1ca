"""The upstream server behind the console when the MCP conformance suite runs against it.

    python tests/servers/conformance_upstream.py    # stdio, as the console spawns it

Each tool, resource, template and prompt is one the suite's server scenarios
(tools-call-*, resources-*, prompts-*, completion-complete) ask for by name, and
answers what that scenario checks for; touch_watched_resource and
announce_list_changes let the console's own tests announce an update of the
resource the subscription scenarios watch, and changes of every list.
Built with the official SDK, so that a failing scenario points at the console,
not at a home-made server.
"""

import asyncio
import base64
import json
from typing import Annotated, Literal

from mcp.server.elicitation import AcceptedElicitation, ElicitationResult
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.resolve import Elicit, Resolve, Sample
from mcp_types import (
    AudioContent,
    CallToolResult,
    Completion,
    CreateMessageResult,
    EmbeddedResource,
    ImageContent,
    PromptReference,
    SamplingMessage,
    TextContent,
    TextResourceContents,
)
from pydantic import BaseModel, Field

# A 1x1 PNG and a WAV header with two bytes of silence: the smallest valid samples.
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
WAV = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="
# The suite waits for notifications sent apart in time, not in one burst.
STEP_SECONDS = 0.05

server = MCPServer("conformance-upstream", version="1.0.0")


def image() -> ImageContent:
    return ImageContent(type="image", data=PNG, mime_type="image/png")


def embedded(uri: str, mime_type: str, text: str) -> EmbeddedResource:
    return EmbeddedResource(type="resource", resource=TextResourceContents(uri=uri, mime_type=mime_type, text=text))


@server.tool(structured_output=False)
def test_simple_text() -> str:
    """Answers with one text block."""
    return "This is a simple text response for testing."


@server.tool(structured_output=False)
def test_image_content() -> list[ImageContent]:
    """Answers with one PNG image block."""
    return [image()]


@server.tool(structured_output=False)
def test_audio_content() -> list[AudioContent]:
    """Answers with one WAV audio block."""
    return [AudioContent(type="audio", data=WAV, mime_type="audio/wav")]


@server.tool(structured_output=False)
def test_embedded_resource() -> list[EmbeddedResource]:
    """Answers with one embedded text resource."""
    return [embedded("test://embedded-resource", "text/plain", "This is an embedded resource content.")]


@server.tool(structured_output=False)
def test_multiple_content_types() -> list[TextContent | ImageContent | EmbeddedResource]:
    """Answers with a text, an image and an embedded resource block."""
    return [
        TextContent(type="text", text="Multiple content types test:"),
        image(),
        embedded("test://mixed-content-resource", "application/json", '{"test":"data","value":123}'),
    ]


@server.tool(structured_output=False)
async def test_tool_with_logging(ctx: Context) -> str:
    """Sends three info log messages while it runs."""
    for step, text in enumerate(("Tool execution started", "Tool processing data", "Tool execution completed")):
        if step:
            await asyncio.sleep(STEP_SECONDS)
        await ctx.log("info", text)
    return "Tool with logging executed successfully"


@server.tool(structured_output=False)
async def test_tool_with_progress(ctx: Context) -> str:
    """Reports progress 0, 50 and 100 of 100 while it runs, to a caller that sent a progressToken."""
    for step, done in enumerate((0, 50, 100)):
        if step:
            await asyncio.sleep(STEP_SECONDS)
        await ctx.report_progress(done, 100, f"Completed step {done} of 100")
    return "Tool with progress executed successfully"


@server.tool()
def test_error_handling() -> CallToolResult:
    """Always fails, as a tool execution error (isError) rather than a protocol error."""
    text = "This tool intentionally returns an error for testing"
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


class UserInfo(BaseModel):
    username: str = Field(description="User's response")
    email: str = Field(description="User's email address")


class Defaults(BaseModel):
    """SEP-1034: a default for every primitive type."""

    name: str = "John Doe"
    age: int = 30
    score: float = 95.5
    status: Literal["active", "inactive", "pending"] = "active"
    verified: bool = True


def titled(*pairs: tuple[str, str]) -> list[dict]:
    return [{"const": const, "title": title} for const, title in pairs]


class Enums(BaseModel):
    """SEP-1330: the five ways of asking for a choice."""

    untitledSingle: Literal["option1", "option2", "option3"]
    titledSingle: str = Field(
        json_schema_extra={
            "oneOf": titled(("value1", "First Option"), ("value2", "Second Option"), ("value3", "Third Option"))
        }
    )
    legacyEnum: Literal["opt1", "opt2", "opt3"] = Field(
        json_schema_extra={"enumNames": ["Option One", "Option Two", "Option Three"]}
    )
    untitledMulti: list[Literal["option1", "option2", "option3"]]
    titledMulti: list[str] = Field(
        json_schema_extra={
            "items": {
                "anyOf": titled(("value1", "First Choice"), ("value2", "Second Choice"), ("value3", "Third Choice"))
            }
        }
    )


def outcome(answer) -> str:
    content = answer.data.model_dump() if isinstance(answer, AcceptedElicitation) else None
    return f"action={answer.action}, content={json.dumps(content)}"


def ask_user(message: str) -> Elicit[UserInfo]:
    return Elicit(message, UserInfo)


def ask_defaults() -> Elicit[Defaults]:
    return Elicit("Confirm or change the defaults", Defaults)


def ask_enums() -> Elicit[Enums]:
    return Elicit("Pick from each kind of choice", Enums)


def ask_model(prompt: str) -> Sample:
    return Sample([SamplingMessage(role="user", content=TextContent(type="text", text=prompt))], max_tokens=100)


@server.tool(structured_output=False)
def test_elicitation(message: str, answer: Annotated[ElicitationResult[UserInfo], Resolve(ask_user)]) -> str:
    """Asks the user for a username and an email address, with the given message."""
    return f"User response: {outcome(answer)}"


@server.tool(structured_output=False)
def test_elicitation_sep1034_defaults(answer: Annotated[ElicitationResult[Defaults], Resolve(ask_defaults)]) -> str:
    """Asks for a string, an integer, a number, an enum and a boolean, each with a default."""
    return f"Elicitation completed: {outcome(answer)}"


@server.tool(structured_output=False)
def test_elicitation_sep1330_enums(answer: Annotated[ElicitationResult[Enums], Resolve(ask_enums)]) -> str:
    """Asks for single and multiple choices, untitled, titled and with legacy enumNames."""
    return f"Elicitation completed: {outcome(answer)}"


@server.tool(structured_output=False)
def test_sampling(prompt: str, reply: Annotated[CreateMessageResult, Resolve(ask_model)]) -> str:
    """Asks the client's language model to complete the prompt."""
    content = reply.content if isinstance(reply.content, list) else [reply.content]
    return "LLM response: " + " ".join(block.text for block in content if isinstance(block, TextContent))


# The json-schema-2020-12 scenario (pending in the suite) checks that these keywords reach the client intact.
JSON_SCHEMA_2020_12 = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {"address": {"type": "object", "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
    "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
    "additionalProperties": False,
}


@server.tool(description="Tool with JSON Schema 2020-12 features", structured_output=False)
def json_schema_2020_12_tool(name: str = "", address: dict | None = None) -> str:
    return f"Received {name}"


# The SDK derives a schema from the signature; the scenario wants this one, word for word.
server._tool_manager.get_tool("json_schema_2020_12_tool").parameters = JSON_SCHEMA_2020_12


@server.resource("test://static-text", name="static-text", mime_type="text/plain")
def static_text() -> str:
    """A fixed text resource."""
    return "This is the content of the static text resource."


@server.resource("test://static-binary", name="static-binary", mime_type="image/png")
def static_binary() -> bytes:
    """A fixed PNG image."""
    return base64.b64decode(PNG)


@server.resource("test://template/{id}/data", name="template-data", mime_type="application/json")
def template_data(id: str) -> str:
    """Data for one id."""
    return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"})


@server.resource("test://watched-resource", name="watched-resource", mime_type="text/plain")
def watched_resource() -> str:
    """A resource its subscribers hear about whenever touch_watched_resource runs."""
    return "Watched resource content"


@server.tool(structured_output=False)
async def touch_watched_resource(ctx: Context) -> str:
    """Announces an update of test://watched-resource to its subscribers."""
    await ctx.notify_resource_updated("test://watched-resource")
    return "test://watched-resource updated"


@server.tool(structured_output=False)
async def announce_list_changes(ctx: Context) -> str:
    """Tells listening clients that the tool, prompt and resource lists changed."""
    await ctx.notify_tools_changed()
    await ctx.notify_prompts_changed()
    await ctx.notify_resources_changed()
    return "announced"


@server.prompt(description="A prompt without arguments.")
def test_simple_prompt() -> str:
    return "This is a simple prompt for testing."


@server.prompt(description="A prompt of two arguments.")
def test_prompt_with_arguments(arg1: str, arg2: str) -> str:
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@server.prompt(description="A prompt that embeds a resource.")
def test_prompt_with_embedded_resource(resourceUri: str) -> list[dict]:
    resource = embedded(resourceUri, "text/plain", "Embedded resource content for testing.")
    return [
        {"role": "user", "content": resource},
        {"role": "user", "content": TextContent(type="text", text="Please process the embedded resource above.")},
    ]


@server.prompt(description="A prompt with an image.")
def test_prompt_with_image() -> list[dict]:
    return [
        {"role": "user", "content": image()},
        {"role": "user", "content": TextContent(type="text", text="Please analyze the image above.")},
    ]


@server.completion()
async def complete(ref, argument, context):
    if isinstance(ref, PromptReference) and argument.name == "arg1":
        return Completion(values=[v for v in ("paris", "park", "party") if v.startswith(argument.value)])
    return None


if __name__ == "__main__":
    server.run("stdio")
