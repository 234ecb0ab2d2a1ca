"""Django forms for the console's pages."""

import json
import shlex

from django import forms
from django.core.validators import RegexValidator, URLValidator

from approvals.calls.kinds import CallKind
from approvals.catalog import servers
from approvals.catalog.models import Server
from approvals.policy import engine, rules
from approvals.policy.models import PolicyRule
from approvals.protocol.tools import DEFAULT_ANNOTATIONS
from approvals.tokens.models import ClientToken


class SecretTextarea(forms.Textarea):
    # Upstream credentials never travel back to a browser, not even the ones the
    # admin just typed into a form that failed validation.
    def format_value(self, value):
        return None


class SafeChoiceField(forms.TypedChoiceField):
    """Radio buttons over a model's choices, starting at the safe one.

    Optional so that a post without the field (an older page, a script) keeps the safe choice.
    """

    widget = forms.RadioSelect

    def __init__(self, model_choices, safe, **kwargs):
        super().__init__(choices=model_choices.choices, initial=safe, required=False, empty_value=safe, **kwargs)


class EditingForm(forms.Form):
    """A form that adds an object or, given one as `editing`, changes it: its fields then start from the object."""

    def __init__(self, *args, editing=None, **kwargs):
        if editing is not None:
            kwargs.setdefault("initial", self.initial_from(editing))
        super().__init__(*args, **kwargs)

    def initial_from(self, editing) -> dict:
        raise NotImplementedError


class ServerForm(EditingForm):
    """Adds a server, or edits one when built with `server=`; `changes()` gives the arguments for servers.*."""

    name = forms.CharField(max_length=100)
    transport = forms.ChoiceField(
        choices=Server.Transport.choices, initial=Server.Transport.HTTP, widget=forms.RadioSelect
    )
    url = forms.CharField(
        label="URL",
        required=False,
        max_length=2000,
        validators=[URLValidator(schemes=["http", "https"])],
        help_text="The Streamable HTTP endpoint, http:// or https://.",
        widget=forms.URLInput(attrs={"placeholder": "https://mcp.example.com/mcp"}),
    )
    command = forms.CharField(
        required=False,
        help_text="Program and arguments, split as a POSIX shell would (quotes work, pipes do not).",
        widget=forms.TextInput(attrs={"placeholder": "npx -y @example/mcp-server --read-only", "spellcheck": "false"}),
    )
    headers = forms.CharField(
        required=False,
        widget=SecretTextarea(attrs={"rows": 3, "spellcheck": "false", "autocomplete": "off"}),
        help_text="One “Name: value” per line, sent on every HTTP request to this server.",
    )
    env = forms.CharField(
        label="Environment",
        required=False,
        widget=SecretTextarea(attrs={"rows": 3, "spellcheck": "false", "autocomplete": "off"}),
        help_text="One KEY=value per line, set for the stdio subprocess.",
    )
    trusted = forms.BooleanField(
        required=False, help_text="Count this server's tool annotations in policy and show them as verified."
    )
    enabled = forms.BooleanField(required=False, initial=True)
    # Not named `changes`, which is the method below.
    changed_tools = SafeChoiceField(
        Server.Changes,
        Server.Changes.REVIEW,
        label="Changed tools",
        help_text="A tool that is new or whose definition changed reaches clients only once accepted.",
    )
    accept_tools = forms.BooleanField(
        label="Accept its tools now",
        required=False,
        help_text="Accept the tools of its first listing without review; otherwise an admin reviews each one.",
    )
    input_routing = SafeChoiceField(
        Server.InputRouting,
        Server.InputRouting.OPERATOR,
        label="Input requests",
        help_text=(
            "Who answers what this server asks in the middle of a call (elicitation). Sampling requests always go "
            "to clients that declared sampling, and are declined otherwise."
        ),
    )
    tool_prefix = forms.CharField(
        required=False,
        max_length=40,
        validators=[RegexValidator(r"^[A-Za-z0-9_-]*$", "Use only letters, digits, '_' and '-'.")],
        help_text=(
            "Put before each upstream tool name to form the name clients see. "
            "Left blank, the default is “<slug>_”, e.g. “billing_api_” for a server named Billing API."
        ),
    )
    no_prefix = forms.BooleanField(
        label="No prefix", required=False, help_text="Expose tools under their bare upstream names."
    )
    clear_headers = forms.BooleanField(label="Clear all headers", required=False)
    clear_env = forms.BooleanField(label="Clear all environment variables", required=False)

    def __init__(self, *args, server=None, **kwargs):
        self.server = server
        super().__init__(*args, editing=server, **kwargs)
        if server is None:
            del self.fields["clear_headers"], self.fields["clear_env"]
        else:
            del self.fields["accept_tools"]
            self.fields["headers"].label = "Replace headers with"
            self.fields["env"].label = "Replace environment with"
            for field in ("headers", "env"):
                self.fields[field].help_text += " Left blank, the stored values are kept."

    def initial_from(self, server):
        return {
            "name": server.name,
            "transport": server.transport,
            "url": server.url,
            "command": server.command,
            "trusted": server.trusted,
            "enabled": server.enabled,
            "tool_prefix": server.tool_prefix,
            "input_routing": server.input_routing,
            "changed_tools": server.changes,
            "no_prefix": server.tool_prefix == "",
        }

    def clean_name(self):
        name = self.cleaned_data["name"].strip()
        others = Server.objects.filter(name=name)
        if self.server is not None:
            others = others.exclude(pk=self.server.pk)
        if others.exists():
            raise forms.ValidationError("A server of this name exists already.")
        return name

    def clean_command(self):
        command = self.cleaned_data["command"].strip()
        try:
            shlex.split(command)
        except ValueError as exc:
            raise forms.ValidationError(f"The command cannot be split into arguments: {exc}.") from None
        return command

    def clean_headers(self):
        return self._parse("headers", servers.parse_header_lines)

    def clean_env(self):
        return self._parse("env", servers.parse_env_lines)

    def _parse(self, field, parse):
        text = self.cleaned_data[field]
        try:
            return parse(text.splitlines()) if text.strip() else None
        except ValueError as exc:
            raise forms.ValidationError(str(exc)) from None

    def clean(self):
        data = super().clean()
        transport = data.get("transport")
        if transport == Server.Transport.HTTP and not data.get("url"):
            self.add_error("url", "An HTTP server needs a URL.")
        if transport == Server.Transport.STDIO and "command" in data and not shlex.split(data["command"]):
            self.add_error("command", "A stdio server needs a command.")
        if data.get("no_prefix") and data.get("tool_prefix"):
            self.add_error("tool_prefix", "Either enter a prefix or tick “No prefix”, not both.")
        for field in ("headers", "env"):
            if data.get(f"clear_{field}") and data.get(field):
                self.add_error(field, "Either replace or clear, not both.")
        return data

    def changes(self):
        """Keyword arguments for servers.add_server, or servers.update_server when editing."""
        data = self.cleaned_data
        http = data["transport"] == Server.Transport.HTTP
        changes = {
            "name": data["name"],
            "transport": data["transport"],
            "url": data["url"] if http else "",
            "command": "" if http else data["command"],
            "trusted": data["trusted"],
            "enabled": data["enabled"],
            "tool_prefix": self._prefix(),
            "input_routing": data["input_routing"],
            "changes": data["changed_tools"],
        }
        if self.server is None:
            changes["accept_tools"] = data["accept_tools"]
        for field in ("headers", "env"):
            if data[field] is not None:
                changes[field] = data[field]
            elif data.get(f"clear_{field}") or self.server is None:
                changes[field] = {}
        return changes

    def _prefix(self):
        data = self.cleaned_data
        if data["no_prefix"]:
            return ""
        if data["tool_prefix"]:
            return data["tool_prefix"]
        # add_server picks "<slug>_" for None; an existing server already has its slug.
        return None if self.server is None else Server.default_prefix(self.server.slug)


def json_field(text: str, empty):
    """The JSON value typed into a field, `empty` for nothing; a ValidationError saying where it breaks."""
    try:
        return json.loads(text) if text.strip() else empty
    except json.JSONDecodeError as exc:
        raise forms.ValidationError(f"Not valid JSON: {exc}.") from None


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
        required=False, min_value=1, help_text="1 puts the rule first; left blank, it goes last."
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
    separation_of_duties = SafeChoiceField(
        PolicyRule.SeparationOfDuties,
        PolicyRule.SeparationOfDuties.INHERIT,
        label="Separation of duties",
        help_text="Whether the person who owns the calling client token may approve its calls.",
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
            "separation_of_duties": rule.separation_of_duties,
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
            separation_of_duties=data["separation_of_duties"],
        )
