"""The form an admin fills in for a webhook endpoint."""

from django import forms

from approvals.webhooks.models import EVENT_TYPES


class EndpointForm(forms.Form):
    url = forms.CharField(label="URL", max_length=2000, help_text="http or https; redirects are not followed.")
    description = forms.CharField(max_length=200, required=False)
    events = forms.MultipleChoiceField(
        choices=[(name, f"{name}: {text}") for name, text in EVENT_TYPES.items()],
        widget=forms.CheckboxSelectMultiple,
    )
    slack = forms.BooleanField(
        label="Slack-compatible body", required=False, help_text='Post {"text": …} with a link to the page.'
    )
    enabled = forms.BooleanField(required=False, initial=True)
    console_url = forms.CharField(
        label="Console address",
        max_length=500,
        help_text="Where the links in a body point: this console, as you reach it.",
    )
