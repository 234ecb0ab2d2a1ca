"""The OAuth part of a server's form: how the console is authorized at a server that requires OAuth."""

from django import forms

from approvals.forms.fields import SafeChoiceField
from approvals.upstream_oauth.models import Connection, OAuth, UpstreamClient
from approvals.upstream_oauth.registering import signing_key_ok

GRANTS = [
    (OAuth.NONE, "Only if the server asks: a 401 from it offers Connect"),
    (OAuth.AUTHORIZATION_CODE, "A person consents in their browser (Connect)"),
    (OAuth.CLIENT_CREDENTIALS, "Client credentials: the console alone, machine to machine"),
]


class OAuthFields(forms.Form):
    oauth = forms.TypedChoiceField(
        label="OAuth",
        choices=GRANTS,
        required=False,
        empty_value=OAuth.NONE,
        initial=OAuth.NONE,
        widget=forms.RadioSelect,
    )
    connection = SafeChoiceField(
        Connection,
        Connection.SHARED,
        help_text="With OAuth: whose account at the server a call acts as.",
    )
    no_resource_indicator = forms.BooleanField(
        label="Leave out the resource indicator",
        required=False,
        help_text="For authorization servers that refuse RFC 8707's resource parameter.",
    )
    client_id = forms.CharField(
        label="Client ID",
        required=False,
        max_length=2000,
        help_text="Only when the authorization server issued the console one (pre-registration); otherwise the "
        "console registers itself.",
    )
    client_secret = forms.CharField(
        required=False, widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "off"})
    )
    private_key = forms.CharField(
        label="Private key (PEM)",
        required=False,
        widget=forms.Textarea(attrs={"rows": 3, "spellcheck": "false", "autocomplete": "off"}),
        help_text="Instead of a secret: the console signs a JWT with it (RFC 7523).",
    )

    def oauth_initial(self, server) -> dict:
        return {
            "oauth": server.oauth,
            "connection": server.connection,
            "no_resource_indicator": not server.resource_indicator,
        }

    def clean_private_key(self):
        key = self.cleaned_data["private_key"].strip()
        if key and not signing_key_ok(key):
            raise forms.ValidationError("This is not an unencrypted PEM private key (RSA, EC or Ed25519).")
        return key

    def clean_oauth_fields(self, data: dict) -> None:
        kept = (
            self.server is not None and UpstreamClient.objects.filter(server=self.server).exclude(client_id="").exists()
        )
        if data.get("oauth") == OAuth.CLIENT_CREDENTIALS and not data.get("client_id") and not kept:
            self.add_error("client_id", "Client credentials need the client ID the server issued.")
        if (data.get("client_secret") or data.get("private_key")) and not data.get("client_id"):
            self.add_error("client_id", "A secret or a key belongs to a client ID: enter it too.")

    def oauth_changes(self) -> dict:
        data = self.cleaned_data
        changes = {
            "oauth": data["oauth"],
            "connection": data["connection"],
            "resource_indicator": not data["no_resource_indicator"],
        }
        if data["client_id"]:
            changes |= {k: data[k] for k in ("client_id", "client_secret", "private_key")}
        return changes
