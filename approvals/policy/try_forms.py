"""The policy's Try page: a tool call, a permission request, a resource read or a prompt get to try."""

import json

from django import forms

from approvals.catalog.models import Tool
from approvals.catalog.surface_models import Prompt
from approvals.forms.fields import json_field
from approvals.forms.schema import build_form, is_flat
from approvals.protocol import permission_prompt
from approvals.tokens.models import ClientToken


def token_field(label="Client token"):
    return forms.ModelChoiceField(queryset=ClientToken.objects.all(), label=label, empty_label=None)


def json_field_of_an_object(label: str, rows: int, help_text: str):
    """A textarea for a JSON object, `{}` to start with; clean it with json_object."""
    return forms.CharField(
        label=label,
        initial="{}",
        required=False,
        widget=forms.Textarea(attrs={"rows": rows, "spellcheck": "false"}),
        help_text=help_text,
    )


def json_object(text: str, what: str) -> dict:
    value = json_field(text, {})
    if not isinstance(value, dict):
        raise forms.ValidationError(f"The {what} must be a JSON object.")
    return value


TRY_INPUTS = [("json", "JSON"), ("form", "The tool's fields"), ("pick", "Show the tool's fields")]


class TryForm(forms.Form):
    """A call to try against the policy: which client, which tool, and its arguments.

    The arguments come from a form of fields built from the tool's inputSchema (when it is flat
    enough for one) or from the JSON textarea, which stays for any schema. `input` says which the
    person submitted; "pick" only shows the fields of a newly chosen tool.
    """

    token = token_field()
    tool = forms.ModelChoiceField(
        queryset=Tool.objects.select_related("server").order_by("exposed_name"),
        to_field_name="exposed_name",
        empty_label=None,
    )
    # Set by the button pressed, so neither is rendered as a field.
    input = forms.TypedChoiceField(choices=TRY_INPUTS, required=False, empty_value="json")
    # The tool whose fields were submitted: fields of another tool say nothing about this one's arguments.
    fields_of = forms.CharField(required=False)
    arguments = json_field_of_an_object("Arguments", 6, "The call's arguments as a JSON object.")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["tool"].queryset = self.fields["tool"].queryset.filter(status__in=Tool.HELD)
        self.fields["tool"].label_from_instance = lambda tool: tool.exposed_name
        self.schema_form = None

    def clean_arguments(self):
        if self.cleaned_data.get("input") != "json":
            return None
        return json_object(self.cleaned_data["arguments"], "arguments")

    def clean(self):
        data = super().clean()
        tool = data.get("tool")
        schema = (tool.definition.get("inputSchema") if tool else None) or {}
        if tool is None or not is_flat(schema):
            return data
        chosen = data.get("input")
        if chosen == "form" and data.get("fields_of") != tool.exposed_name:
            chosen = data["input"] = "pick"
        submitted = self.data if chosen == "form" else None
        self.schema_form = build_form(schema, data.get("arguments") or {}, data=submitted)
        self.schema_form.tool_name = tool.exposed_name
        if chosen == "form" and self.schema_form.is_valid():
            data["arguments"] = self.schema_form.to_arguments()
        return data

    def call(self):
        """(token, tool, arguments) to try, or None when there is nothing to try yet (or the fields are invalid)."""
        arguments = self.cleaned_data.get("arguments")
        if arguments is None:
            return None
        return self.cleaned_data["token"], self.cleaned_data["tool"], arguments

    def shown_json(self) -> str:
        """The JSON textarea's text: what was tried from the fields, so that switching to JSON starts from it."""
        tried = self.is_bound and self.is_valid() and self.cleaned_data["input"] == "form"
        if tried and self.cleaned_data["arguments"] is not None:
            return json.dumps(self.cleaned_data["arguments"], ensure_ascii=False)
        return self["arguments"].value() or "{}"


class TryPermissionForm(forms.Form):
    """A coding agent's permission request to try against the policy: the client, the agent's tool, its input."""

    token = token_field("Agent's token")
    agent_tool = forms.CharField(
        label="Asks to use",
        max_length=permission_prompt.MAX_TOOL_NAME,
        help_text="The coding agent's own tool, e.g. Bash, Edit, Read.",
        widget=forms.TextInput(attrs={"spellcheck": "false", "autocomplete": "off"}),
    )
    tool_input = json_field_of_an_object(
        "Input", 4, 'What the agent would run its tool with, as a JSON object, e.g. {"command": "ls"}.'
    )

    def clean_tool_input(self):
        return json_object(self.cleaned_data["tool_input"], "input")

    def request(self):
        """(token, agent's tool, input) to try."""
        return self.cleaned_data["token"], self.cleaned_data["agent_tool"].strip(), self.cleaned_data["tool_input"]


class TryReadForm(forms.Form):
    """A resources/read to try against the policy: the client and the URI it reads."""

    token = token_field()
    uri = forms.CharField(
        label="URI",
        max_length=2000,
        help_text="As the client would send it, e.g. file://docs/guide.md.",
        widget=forms.TextInput(attrs={"spellcheck": "false", "autocomplete": "off"}),
    )

    def request(self):
        """(token, URI) to try."""
        return self.cleaned_data["token"], self.cleaned_data["uri"].strip()


class TryPromptForm(forms.Form):
    """A prompts/get to try against the policy: the client, the prompt, and its arguments."""

    token = token_field()
    prompt = forms.ModelChoiceField(
        queryset=Prompt.objects.select_related("server").order_by("exposed_name"),
        to_field_name="exposed_name",
        empty_label=None,
    )
    arguments = json_field_of_an_object(
        "Arguments", 4, 'The arguments as a JSON object of strings, e.g. {"code": "print(1)"}.'
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["prompt"].label_from_instance = lambda prompt: prompt.exposed_name

    def clean_arguments(self):
        return json_object(self.cleaned_data["arguments"], "arguments")

    def request(self):
        """(token, prompt, arguments) to try."""
        return self.cleaned_data["token"], self.cleaned_data["prompt"], self.cleaned_data["arguments"]
