"""The forms an operator decides with: approve or deny, and edit then approve."""

import json

from django import forms

from approvals.calls import agent_tools, lifecycle
from approvals.calls.models import Call
from approvals.forms.fields import whole_number
from approvals.forms.schema import build_form, is_flat

MAX_REASON = 2000
MAX_JSON_CHARS = 512 * 1024


class ApproveOrDeny(forms.Form):
    decision = forms.ChoiceField(choices=[("approve", "Approve"), ("deny", "Deny")])
    reason = forms.CharField(required=False, max_length=MAX_REASON)

    def clean(self):
        cleaned = super().clean()
        if cleaned.get("decision") == "deny" and not cleaned.get("reason", "").strip():
            self.add_error("reason", "Give a reason for the denial: the client is told it.")
        return cleaned

    @property
    def approves(self) -> bool:
        return self.cleaned_data["decision"] == "approve"

    def problem(self) -> str:
        return " ".join(str(error) for errors in self.errors.values() for error in errors)


class DecisionForm(ApproveOrDeny):
    # The digest of the call as the operator saw it: a decision binds to exactly that. Not required here so that
    # one without it is refused as deciding.decide refuses a wrong one: a conflict, not a form to correct.
    binding = forms.CharField(max_length=64, required=False)


class BulkDecisionForm(ApproveOrDeny):
    """Several calls decided at once; each selected box is `pk:binding`, the call as the operator saw it."""

    def __init__(self, data=None):
        super().__init__(data)
        self.selection = {}
        for value in data.getlist("call") if data is not None else []:
            pk, _, binding = str(value).partition(":")
            if (number := whole_number(pk, most_digits=11)) is not None and len(binding) == 64:
                self.selection[number] = binding


class JsonArgumentsForm(forms.Form):
    """Arguments as a JSON object, for schemas too rich for a form of fields."""

    arguments = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 14, "spellcheck": "false", "data-json-editor": ""}),
        max_length=MAX_JSON_CHARS,
        label="Arguments (JSON)",
    )

    def clean_arguments(self):
        try:
            value = json.loads(self.cleaned_data["arguments"])
        except json.JSONDecodeError as exc:
            raise forms.ValidationError(
                f"Not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}."
            ) from None
        if not isinstance(value, dict):
            raise forms.ValidationError("The arguments must be a JSON object: {...}.")
        return value

    def to_arguments(self) -> dict:
        return self.cleaned_data["arguments"]


class ArgumentsEditor:
    """Edit then approve: a form of fields for a flat schema, a JSON editor otherwise.

    Either way the schema is checked on the server.
    """

    def __init__(self, call: Call, data=None):
        self.call = call
        schema = agent_tools.input_schema(call)
        # An earlier operator's edit, under a quorum, is where the next one starts.
        shown = call.final_arguments
        self.flat = is_flat(schema, shown)
        if self.flat:
            self.form = build_form(schema, shown, data=data)
        else:
            self.form = JsonArgumentsForm(
                data=data, initial={"arguments": json.dumps(shown, indent=2, ensure_ascii=False)}
            )
        self.binding = data.get("binding", "") if data is not None else lifecycle.call_binding(call)
        self.reason = data.get("reason", "")[:MAX_REASON] if data is not None else ""
        self.errors = []

    def is_valid(self) -> bool:
        return self.form.is_valid()

    def edited_arguments(self) -> dict | None:
        """The new arguments, or None when they are those shown (then it is a plain approval)."""
        arguments = self.form.to_arguments()
        return None if arguments == self.call.final_arguments else arguments

    def refuse(self, errors: list[str]):
        self.errors = errors
