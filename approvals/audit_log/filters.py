"""The auditor's filter as a form: the period, the subjects and the text an audit search narrows by."""

from datetime import UTC

from django import forms
from django.contrib.auth import get_user_model
from django.utils import timezone

from approvals.audit.actions import ACTIONS
from approvals.audit_log import periods
from approvals.calls.models import Call
from approvals.catalog.models import Server, Tool
from approvals.forms.fields import whole_number
from approvals.tokens.models import ClientToken


def utc_if_naive(cleaned: dict, names):
    for name in names:
        # The browser sends local wall time without a zone; the console's clock is UTC.
        if cleaned.get(name) is not None and cleaned[name].tzinfo is None:
            cleaned[name] = cleaned[name].replace(tzinfo=UTC)
    return cleaned


class PeriodForm(forms.Form):
    """The period of an evidence pack: a preset, or both dates."""

    preset = periods.preset_field()
    since = forms.DateTimeField(
        required=False, label="From (UTC)", widget=forms.DateTimeInput(attrs={"type": "datetime-local"})
    )
    until = forms.DateTimeField(
        required=False, label="Until (UTC)", widget=forms.DateTimeInput(attrs={"type": "datetime-local"})
    )

    def clean(self):
        cleaned = utc_if_naive(super().clean(), ("since", "until"))
        if cleaned.get("preset"):
            cleaned["since"], cleaned["until"] = periods.resolve(cleaned["preset"], timezone.now())
            return cleaned
        if not (cleaned.get("since") and cleaned.get("until")):
            raise forms.ValidationError("choose a period, or give both dates")
        if cleaned.get("since") and cleaned.get("until") and cleaned["until"] <= cleaned["since"]:
            raise forms.ValidationError("the period must end after it starts")
        return cleaned


class ToolField(forms.ModelChoiceField):
    """A tool by its exposed name as typed, or by id as links give it (a removed tool and its active successor may
    share a name: the name finds the one held now, else the newest). A select of every tool would list thousands."""

    widget = forms.TextInput(attrs={"placeholder": "any tool", "spellcheck": "false"})

    def to_python(self, value):
        if value in self.empty_values:
            return None
        text = str(value).strip()
        tools = self.queryset
        number = whole_number(text, most_digits=18)
        found = tools.filter(pk=number).first() if number is not None else None
        found = found or tools.filter(exposed_name=text, status__in=Tool.HELD).first()
        found = found or tools.filter(exposed_name=text).order_by("-pk").first()
        if found is None:
            raise forms.ValidationError("No tool goes by that name.")
        return found


class AuditFilter(forms.Form):
    since = forms.DateTimeField(
        required=False, label="From (UTC)", widget=forms.DateTimeInput(attrs={"type": "datetime-local"})
    )
    until = forms.DateTimeField(
        required=False, label="Until (UTC)", widget=forms.DateTimeInput(attrs={"type": "datetime-local"})
    )
    client = forms.ModelChoiceField(
        ClientToken.objects.all(), required=False, empty_label="any client", to_field_name="name"
    )
    server = forms.ModelChoiceField(
        Server.objects.all(), required=False, empty_label="any server", to_field_name="slug"
    )
    tool = ToolField(Tool.objects.only("pk", "exposed_name", "status"), required=False)
    operator = forms.ModelChoiceField(
        get_user_model().objects.order_by("username"), required=False, empty_label="anyone", to_field_name="username"
    )
    # Every action the log may record (the registry), so that none recorded is out of reach here.
    action = forms.ChoiceField(choices=[("", "any action")] + [(a, a) for a in ACTIONS], required=False)
    outcome = forms.ChoiceField(
        choices=[("", "any outcome")] + Call.Status.choices,
        required=False,
        help_text="The final status of the event's call.",
    )
    q = forms.CharField(
        required=False,
        max_length=200,
        label="Text contains",
        help_text="Anywhere in an event: arguments, reasons, input answers, results, errors. Large arguments, of "
        "which an event keeps a preview, are searched whole in their call.",
    )

    def clean(self):
        return utc_if_naive(super().clean(), ("since", "until"))


def filter_fields(form):
    """The filter's fields, each select with its options as (value, label, selected).

    The page draws the selects from these: Django's widget templates would render
    each option through a template of its own, half the page's time."""
    fields = []
    for bound in form:
        choices = bound.field.choices if isinstance(bound.field.widget, forms.Select) else None
        chosen = str(bound.value() or "")
        options = None if choices is None else [(str(value), label, str(value) == chosen) for value, label in choices]
        fields.append({"field": bound, "options": options})
    return fields
