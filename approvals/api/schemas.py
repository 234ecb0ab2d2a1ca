"""What the API's requests carry and its answers hold: the shapes its OpenAPI document describes."""

from datetime import datetime
from typing import Any, Literal

from ninja import Field, Schema

DIGEST = r"^[0-9a-f]{64}$"


class Error(Schema):
    detail: str


class Invalid(Schema):
    detail: str
    errors: list[str]


class Me(Schema):
    username: str
    roles: list[str]
    can_decide: bool
    can_read_audit: bool
    authenticated_by: Literal["api_key", "session"]


class CallSummary(Schema):
    id: int
    status: str
    tool: str
    server: str | None = Field(description="The server's slug.")
    client: str = Field(description="The client token's name.")
    received_at: datetime
    expires_at: datetime | None
    decided_by: str | None
    decided_at: datetime | None
    approvals_needed: int
    task_id: str | None = Field(description="The MCP task its client follows it by, if it asked for one.")
    task_status: Literal["working", "completed", "failed", "cancelled"] | None = Field(
        description="The task's status as its client reads it: working until the call ends."
    )
    upstream_task_status: str | None = Field(
        description="For a tool its server runs only as a task: that task's last status, as the server gave it."
    )


class InputSummary(Schema):
    id: int
    call_id: int
    method: str
    mode: str
    message: str
    status: str
    routed_to: str
    server: str | None
    created_at: datetime
    expires_at: datetime | None
    answered_by: str | None
    answered_at: datetime | None


class InputDetail(InputSummary):
    params: dict[str, Any]
    requested_schema: dict[str, Any] | None = Field(description="For a form: the schema its answer must fit.")
    answer: dict[str, Any] | None


class Queue(Schema):
    calls: list[CallSummary]
    inputs: list[InputSummary]


class CallPage(Schema):
    calls: list[CallSummary]
    older: int | None = Field(description="Pass as `before` for the next page back in time; null on the last.")


class Step(Schema):
    name: str
    at: datetime
    detail: str


class CallDetail(CallSummary):
    arguments: dict[str, Any]
    edited_arguments: dict[str, Any] | None
    arguments_digest: str
    tool_digest: str
    tool_definition: dict[str, Any] | None = Field(description="The tool's definition as the operator is shown it.")
    binding: str = Field(description="What an approval binds to; send it back with a decision.")
    rule: str
    reason: str
    approvals: list[str]
    is_error: bool
    error: str
    result: dict[str, Any] | None
    timeline: list[Step]
    inputs: list[InputSummary]


class Decision(Schema):
    action: Literal["approve", "deny"]
    binding: str = Field(pattern=DIGEST, description="The call's `binding` as you read it: refused if it changed.")
    reason: str = Field("", max_length=2000, description="Told to the client on a denial; kept in the audit log.")
    arguments: dict[str, Any] | None = Field(None, description="Approve these edited arguments instead.")


class Decided(Schema):
    message: str
    call: CallSummary


class Conflict(Schema):
    detail: str
    status: str
    decided_by: str | None = Field(description="Who decided or answered first, when a person did.")
    decided_at: datetime | None
    binding: str | None = Field(description="A call's binding as it stands now.")


class Answer(Schema):
    action: Literal["accept", "decline", "cancel"]
    content: dict[str, Any] | None = Field(
        None,
        description=(
            "A form's answer, checked against its schema; for a sampling request, the reply written in the model's "
            'place, as {"text": ...} (a sampling request is accepted with it or declined).'
        ),
    )


class Answered(Schema):
    message: str
    input: InputSummary


class AuditEventOut(Schema):
    seq: int
    at: datetime
    actor_type: str
    actor_name: str
    action: str
    request_id: str
    call_id: int | None
    server_id: int | None
    tool_id: int | None
    token_id: int | None
    data: Any
    hash: str


class AuditPage(Schema):
    events: list[AuditEventOut]
    older: int | None = Field(description="Pass as `before` for the next page back in time; null on the last.")
