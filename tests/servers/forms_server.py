"""An upstream server built with the official SDK whose one tool asks for every kind of field elicitation allows.

    python tests/servers/forms_server.py    # stdio; speaks 2026-07-28 (and the legacy revisions)

fill_profile elicits through Resolve/Elicit and answers with what it got, as
JSON, so a test can see each value arrive with its type. book_trip asks two
questions at once: in 2026-07-28 they arrive in one input_required round.
"""

import json
from datetime import date, datetime
from typing import Annotated, Literal

from mcp.server.elicitation import AcceptedElicitation, ElicitationResult
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.resolve import Elicit, Resolve
from pydantic import BaseModel, Field

server = MCPServer("forms-test-server", version="1.0.0")


def titled(*pairs: tuple[str, str]) -> list[dict]:
    return [{"const": const, "title": title} for const, title in pairs]


class Profile(BaseModel):
    name: str = Field(title="Full name", description="As written on the passport", min_length=2, max_length=40)
    email: str = Field(title="Email", json_schema_extra={"format": "email"})
    homepage: str = Field(title="Homepage", json_schema_extra={"format": "uri"})
    born: date = Field(title="Date of birth")
    meeting: datetime = Field(title="First meeting")
    age: int = Field(30, title="Age", ge=18, le=99)
    score: float = Field(9.5, title="Score", ge=0, le=10)
    agree: bool = Field(True, title="I agree to the terms")
    color: Literal["red", "green", "blue"] = Field("red", title="Colour")
    pet: Literal["cat", "dog"] = Field(title="Pet", json_schema_extra={"enumNames": ["Cats", "Dogs"]})
    hero: str = Field(title="Hero", json_schema_extra={"oneOf": titled(("h1", "Superman"), ("h2", "Batman"))})
    tools: list[Literal["saw", "drill", "file"]] = Field(title="Tools", min_length=1, max_length=2)
    fish: list[str] = Field(
        ["f1"], title="Fish", json_schema_extra={"items": {"anyOf": titled(("f1", "Tuna"), ("f2", "Trout"))}}
    )


def ask_profile(who: str) -> Elicit[Profile]:
    return Elicit(f"Tell us about {who}.", Profile)


@server.tool(structured_output=False)
def fill_profile(who: str, answer: Annotated[ElicitationResult[Profile], Resolve(ask_profile)]) -> str:
    """Asks a person for a profile of every field type and answers with what came back."""
    if isinstance(answer, AcceptedElicitation):
        return json.dumps(answer.data.model_dump(mode="json"), sort_keys=True)
    return f"no profile ({answer.action})"


class Choice(BaseModel):
    pick: Literal["yes", "no"]


def ask_flight() -> Elicit[Choice]:
    return Elicit("Book the flight?", Choice)


def ask_hotel() -> Elicit[Choice]:
    return Elicit("Book the hotel?", Choice)


@server.tool(structured_output=False)
def book_trip(
    flight: Annotated[ElicitationResult[Choice], Resolve(ask_flight)],
    hotel: Annotated[ElicitationResult[Choice], Resolve(ask_hotel)],
) -> str:
    """Asks about the flight and the hotel in the same breath."""
    picks = [
        answer.data.pick if isinstance(answer, AcceptedElicitation) else answer.action for answer in (flight, hotel)
    ]
    return f"flight: {picks[0]}, hotel: {picks[1]}"


if __name__ == "__main__":
    server.run("stdio")
