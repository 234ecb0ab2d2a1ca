"""The form that adds or changes an upstream server."""

import shlex

from django import forms
from django.core.validators import RegexValidator, URLValidator

from approvals.catalog import credentials
from approvals.catalog.models import SLACK_CHANNEL, Server
from approvals.forms.fields import EditingForm, SafeChoiceField
from approvals.upstream_oauth.forms import OAuthFields


class SecretTextarea(forms.Textarea):
    # Upstream credentials never travel back to a browser, not even the ones the
    # admin just typed into a form that failed validation.
    def format_value(self, value):
        return None


class ServerForm(OAuthFields, EditingForm):
    """Adds a server, or edits one when built with `server=`; `changes()` gives the arguments for actions.servers."""

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
            "Who answers what this server asks in the middle of a call: elicitation, and sampling (an operator "
            "then writes the reply in the model's place, or declines)."
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
    slack_channel = forms.CharField(
        label="Slack channel",
        required=False,
        max_length=81,
        validators=[SLACK_CHANNEL],
        help_text="Where Slack approvals post its held calls (#approvals, or a channel id), unless their rule names "
        "a channel; left blank, none.",
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
            "slack_channel": server.slack_channel,
            "changed_tools": server.changes,
            "no_prefix": server.tool_prefix == "",
        } | self.oauth_initial(server)

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
        return self._parse("headers", credentials.parse_header_lines)

    def clean_env(self):
        return self._parse("env", credentials.parse_env_lines)

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
        self.clean_oauth_fields(data)
        return data

    def changes(self):
        """Keyword arguments for actions.servers.add_server, or update_server when editing."""
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
            "slack_channel": data["slack_channel"].strip(),
            "changes": data["changed_tools"],
        }
        if self.server is None:
            changes["accept_tools"] = data["accept_tools"]
        if http:
            changes |= self.oauth_changes()
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
