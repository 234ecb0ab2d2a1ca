"""A rule from a held call with a chosen scope, a preview of the calls it would have matched, and the call in hand
decided with it."""

from django import forms
from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render

from approvals.actions.like_this import add_rule_and_decide
from approvals.calls.lifecycle import call_binding
from approvals.calls.models import Call
from approvals.display import like_scopes, rows
from approvals.display.like_this import conditions
from approvals.policy import rule_notes, rules
from approvals.policy.engine import shown
from approvals.views.decorators import permission_or_403

DECISIONS = {"approve": "allow", "deny": "deny"}
ACTIONS = [("allow", "Allow"), ("deny", "Deny")]


class ScopeForm(forms.Form):
    scope = forms.ChoiceField(widget=forms.RadioSelect)
    values = forms.MultipleChoiceField(required=False, widget=forms.CheckboxSelectMultiple, label="Argument values")
    binding = forms.CharField(max_length=64, required=False, widget=forms.HiddenInput)
    # The action the admin came for ("Always allow / deny calls like this"): what a preview shows and the first button.
    action = forms.ChoiceField(choices=ACTIONS, required=False, widget=forms.HiddenInput)

    def __init__(self, call, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["scope"].choices = like_scopes.scope_choices(call)
        self.fields["values"].choices = [
            (c["path"], f"{c['path']} = {shown(c['value'])}") for c in conditions(call.arguments)
        ]


@permission_or_403("approvals.add_policyrule")
def like_this(request, pk):
    call = get_object_or_404(rows.shown_calls(), pk=pk)
    data = request.POST if request.method == "POST" else (request.GET if "scope" in request.GET else None)
    wanted_action = request.GET.get("action")
    initial = {
        "scope": like_scopes.TOOL,
        "binding": call_binding(call),
        "action": wanted_action if wanted_action in dict(ACTIONS) else "allow",
    }
    form = ScopeForm(call, data, initial=initial)
    decision = request.POST.get("decision") if request.method == "POST" else None
    context = {"call": call, "form": form, "matched": None}
    if form.is_valid():
        action = DECISIONS.get(decision) or form.cleaned_data["action"] or "allow"
        wanted = like_scopes.rule_request(call, form.cleaned_data["scope"], action, form.cleaned_data["values"])
        found, _, _ = rules.problems(wanted)
        if found:
            form.add_error(None, "; ".join(message for _, message in found))
        elif decision in DECISIONS and call.status == Call.Status.PENDING:
            done = add_rule_and_decide(call.pk, wanted, request.user, form.cleaned_data["binding"])
            messages.success(
                request, f"Added {done.rule} at position {done.rule.position}; call {call.pk}: {done.decision}"
            )
            for note in rule_notes.warnings(done.rule):
                messages.warning(request, note)
            return redirect("queue")
        else:
            context["matched"] = like_scopes.preview(wanted, call.server_id)
            context["placing"] = rule_notes.placed_words(*rule_notes.placed(wanted))
    return render(request, "approvals/like_this.html", context)
