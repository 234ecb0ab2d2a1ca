"""approval_prompt's arguments and answers, as Claude Code's --permission-prompt-tool sends and reads them."""

import json

import pytest

from approvals.protocol import permission_prompt
from approvals.protocol.permission_prompt import PromptError, read_arguments
from approvals.protocol.schemas import validate


def test_it_reads_the_agents_tool_its_input_and_the_tool_use_id():
    arguments = {"tool_name": "Bash", "input": {"command": "ls"}, "tool_use_id": "toolu_1"}
    assert read_arguments(arguments) == ("Bash", {"command": "ls"}, "toolu_1")
    assert read_arguments({"tool_name": "Read", "input": {}}) == ("Read", {}, "")


@pytest.mark.parametrize(
    "arguments, problem",
    [
        (None, "an object of arguments"),
        ({"input": {}}, "'tool_name' must be a string"),
        ({"tool_name": "", "input": {}}, "'tool_name' must be a string"),
        ({"tool_name": "x" * 201, "input": {}}, "'tool_name' must be a string"),
        ({"tool_name": "Bash", "input": ["ls"]}, "'input' must be an object"),
        ({"tool_name": "Bash", "input": {}, "tool_use_id": 7}, "'tool_use_id' must be a string"),
        ({"tool_name": "Bash", "input": {}, "extra": 1}, "unknown argument extra"),
    ],
)
def test_it_says_what_is_wrong_with_arguments_that_are_no_permission_request(arguments, problem):
    with pytest.raises(PromptError, match=problem):
        read_arguments(arguments)


def test_its_answers_are_one_text_block_of_the_decisions_json():
    allowed = permission_prompt.allow({"command": "ls"})
    denied = permission_prompt.deny("Not here <b>")
    assert json.loads(allowed["content"][0]["text"]) == {"behavior": "allow", "updatedInput": {"command": "ls"}}
    assert json.loads(denied["content"][0]["text"]) == {"behavior": "deny", "message": "Not here <b>"}
    assert "isError" not in allowed and "isError" not in denied


def test_its_definition_takes_what_claude_code_sends():
    schema = permission_prompt.DEFINITION["inputSchema"]
    assert validate(schema, {"tool_name": "Bash", "input": {"command": "ls"}, "tool_use_id": "t"}) == []
    assert validate(schema, {"tool_name": "Bash"}) != []
