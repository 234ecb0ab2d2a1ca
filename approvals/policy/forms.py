"""The form that adds or changes a policy rule."""

import json

from django import forms

from approvals.catalog.models import Server
from approvals.forms.fields import EditingForm, SafeChoiceField, json_field
from approvals.policy import engine, rules
from approvals.policy.kinds import CallKind
from approvals.policy.models import PolicyRule
from approvals.protocol.tools import DEFAULT_ANNOTATIONS
from approvals.tokens.models import ClientToken

ANY_ANNOTATION = [("", "any"), ("true", "true"), ("false", "false")]


class RuleForm(EditingForm):
    """Adds a rule, or edits one when built with `rule=`; `request()` gives the RuleRequest for policy.rules.

    The checks are policy.rules.problems, the shell's own, each shown at the field it is about.
    """

    name = forms.CharField(max_length=100, required=False, help_text="Shown in the queue as the rule that decided.")
    action = forms.ChoiceField(choices=PolicyRule.Action.choices, widget=forms.RadioSelect)
    applies_to = SafeChoiceField(
        CallKind,
        CallKind.TOOL,
        label="Applies to",
        help_text="Tool calls match tools by exposed name; permission requests match a coding agent's own tools "
        "(Bash, Edit, Read...) and their input; resource reads match the URI read; prompt gets match the prompt's "
        "exposed name and its arguments.",
    )
    server = forms.ChoiceField(required=False, help_text="Only calls to this upstream server.")
    tool_glob = forms.CharField(
        label="Tools",
        initial="*",
        max_length=200,
        help_text="Exposed tool name pattern: * any characters, ? one, e.g. records_get_*; for permission requests "
        "the agent's tool, e.g. Bash; for resource reads the URI, e.g. file://docs/*; for prompts the prompt's name.",
        widget=forms.TextInput(attrs={"spellcheck": "false", "autocomplete": "off"}),
    )
    client = forms.ChoiceField(required=False, help_text="Only calls from this client token.")
    conditions = forms.CharField(
        label="Argument conditions",
        required=False,
        initial="[]",
        widget=forms.Textarea(attrs={"rows": 4, "spellcheck": "false", "data-condition-builder": ""}),
        help_text=(
            'A JSON list, every condition must hold: [{"path": "refund.amount", "op": "gt", "value": 100}]. '
            "A path goes into the arguments with dots, and digits for list items (items.0.sku). "
            f"Operators: {', '.join(engine.OPERATORS)}. A deny or ask condition that cannot be evaluated "
            "(a missing value, a value of the wrong type) counts as met; an allow condition as not met."
        ),
    )
    message = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 2}), help_text="Told to the client when the rule denies."
    )
    enabled = forms.BooleanField(required=False, initial=True)
    position = forms.IntegerField(
        required=False,
        min_value=1,
        help_text="1 puts the rule first. Left blank, it goes above the first enabled rule that matches every call "
        "it would (a rule below that one would never decide a call), otherwise last; Check placement shows where.",
    )
    approvals_needed = forms.IntegerField(
        label="Approvals needed",
        initial=1,
        required=False,
        min_value=1,
        max_value=PolicyRule.MAX_APPROVALS_NEEDED,
        help_text="Distinct operators who must approve a call this rule asks about; a single denial ends it.",
    )
    approval_timeout_seconds = forms.IntegerField(
        label="Approval timeout (seconds)",
        required=False,
        min_value=1,
        max_value=PolicyRule.MAX_APPROVAL_TIMEOUT_SECONDS,
        help_text="How long such a call waits for its approvals; left blank, APPROVAL_TIMEOUT_SECONDS.",
    )
    escalate_before_seconds = forms.IntegerField(
        label="Escalate before expiry (seconds)",
        required=False,
        min_value=1,
        max_value=PolicyRule.MAX_APPROVAL_TIMEOUT_SECONDS,
        help_text="A call still waiting this long before it expires is flagged in the queue and call.escalated "
        "is sent to webhooks; left blank, never.",
    )
    separation_of_duties = SafeChoiceField(
        PolicyRule.SeparationOfDuties,
        PolicyRule.SeparationOfDuties.INHERIT,
        label="Separation of duties",
        help_text="Whether the person who owns the calling client token may approve its calls.",
    )

    slack_channel = forms.CharField(
        label="Slack channel",
        required=False,
        max_length=81,
        help_text="Where Slack approvals post the calls this rule holds (#approvals, or a channel id); left blank, "
        "the server's channel, if any.",
    )

    def __init__(self, *args, rule=None, **kwargs):
        self.rule = rule
        super().__init__(*args, editing=rule, **kwargs)
        self.fields["server"].choices = [("", "any server")] + [
            (n, n) for n in Server.objects.values_list("name", flat=True)
        ]
        tokens = [(n, n) for n in ClientToken.objects.filter(revoked_at__isnull=True).values_list("name", flat=True)]
        if rule is not None:
            del self.fields["position"]
            if rule.client and rule.client.revoked:
                tokens.append((rule.client.name, f"{rule.client.name} (revoked)"))
        self.fields["client"].choices = [("", "any client"), *tokens]
        for key in DEFAULT_ANNOTATIONS:
            self.fields[f"annotation_{key}"] = forms.ChoiceField(
                label=key, choices=ANY_ANNOTATION, required=False, widget=forms.Select
            )

    def initial_from(self, rule):
        return {
            "name": rule.name,
            "action": rule.action,
            "applies_to": rule.applies_to,
            "server": rule.server.name if rule.server else "",
            "tool_glob": rule.tool_glob,
            "client": rule.client.name if rule.client else "",
            "conditions": json.dumps(rule.conditions, indent=1, ensure_ascii=False),
            "message": rule.message,
            "enabled": rule.enabled,
            "approvals_needed": rule.approvals_needed,
            "approval_timeout_seconds": rule.approval_timeout_seconds,
            "escalate_before_seconds": rule.escalate_before_seconds,
            "separation_of_duties": rule.separation_of_duties,
            "slack_channel": rule.slack_channel,
            **{f"annotation_{k}": str(v).lower() for k, v in rule.annotations.items()},
        }

    def annotation_fields(self):
        return [self[f"annotation_{key}"] for key in DEFAULT_ANNOTATIONS]

    def clean_conditions(self):
        return json_field(self.cleaned_data["conditions"], [])

    def clean_approvals_needed(self):
        return self.cleaned_data["approvals_needed"] or 1

    def clean(self):
        data = super().clean()
        if self.errors:
            return data
        found, _, _ = rules.problems(self.request())
        for field, message in found:
            self.add_error("annotation_readOnlyHint" if field == "annotations" else field, message)
        return data

    def request(self) -> rules.RuleRequest:
        data = self.cleaned_data
        return rules.RuleRequest(
            action=data["action"],
            applies_to=data["applies_to"],
            server=data["server"] or None,
            tool_glob=data["tool_glob"].strip(),
            client=data["client"] or None,
            annotations={
                key: data[f"annotation_{key}"] == "true" for key in DEFAULT_ANNOTATIONS if data[f"annotation_{key}"]
            },
            conditions=data["conditions"],
            message=data["message"],
            name=data["name"].strip(),
            position=data.get("position"),
            enabled=data["enabled"],
            approvals_needed=data["approvals_needed"],
            approval_timeout_seconds=data["approval_timeout_seconds"],
            escalate_before_seconds=data["escalate_before_seconds"],
            separation_of_duties=data["separation_of_duties"],
            slack_channel=data["slack_channel"].strip(),
        )
