"""The policy's pages: the ordered rules, a rule's form, and the Try page. Admins change, others read."""

from django.conf import settings
from django.contrib import messages
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from approvals.actions import trial
from approvals.audit.chain import Actor
from approvals.display.policy import rule_rows, tool_paths
from approvals.policy import engine, rule_notes, rules
from approvals.policy.forms import RuleForm
from approvals.policy.models import PolicyRule
from approvals.policy.try_forms import TryForm, TryPermissionForm, TryPromptForm, TryReadForm
from approvals.views.decorators import permission_or_403

READ_RULES = "approvals.view_policyrule"
CHANGE_RULES = "approvals.change_policyrule"


@permission_or_403(READ_RULES)
def rule_list(request):
    return render(request, "approvals/rule_list.html", {"rows": rule_rows()})


def rule_form(request, rule=None):
    form = RuleForm(request.POST or None, rule=rule)
    placing = None
    if request.method == "POST" and form.is_valid() and rule is None and "placement" in request.POST:
        # Only where it would go: the form comes back with that position filled in, for the admin to keep or change.
        position, above = rule_notes.placed(form.request())
        placing = rule_notes.placed_words(position, above)
        form = RuleForm({**request.POST.dict(), "position": position})
    elif request.method == "POST" and form.is_valid():
        actor = Actor.user(request.user)
        try:
            if rule is None:
                wanted = form.request()
                if wanted.position is None:
                    wanted.position, above = rule_notes.placed(wanted)
                    messages.info(request, f"Placed {rule_notes.placed_words(wanted.position, above)}.")
                saved = rules.create_rule(wanted, actor)
            else:
                saved = rules.update_rule(rule.pk, form.request(), actor)
        except rules.RuleError as exc:
            form.add_error(None, str(exc))
        except PolicyRule.DoesNotExist:
            raise Http404("No such rule.") from None
        else:
            messages.success(request, f"Saved {saved}, at position {saved.position}.")
            for note in rule_notes.warnings(saved):
                messages.warning(request, note)
            return redirect("rules")
    return render(
        request,
        "approvals/rule_form.html",
        {
            "form": form,
            "rule": rule,
            "placing": placing,
            "partly": rule_notes.partly_covered(rule) if rule else [],
            "tools": tool_paths(),
            "operators": " ".join(engine.OPERATORS),
            "sod_default": settings.SEPARATION_OF_DUTIES,
            "shadowed_by": rule_notes.shadowed(list(PolicyRule.objects.all())).get(rule.pk) if rule else None,
        },
    )


@permission_or_403("approvals.add_policyrule")
def rule_add(request):
    return rule_form(request)


@permission_or_403(CHANGE_RULES)
def rule_edit(request, pk):
    return rule_form(request, get_object_or_404(PolicyRule.objects.select_related("server", "client"), pk=pk))


def changing(change):
    """A POSTed change of one rule by an admin, answered with the list; a rule gone meanwhile is a 404."""

    @require_POST
    @permission_or_403(CHANGE_RULES)
    def view(request, pk):
        try:
            text = change(request, pk, Actor.user(request.user))
        except PolicyRule.DoesNotExist:
            raise Http404("No such rule.") from None
        except rules.RuleError as exc:
            messages.error(request, str(exc))
        else:
            messages.success(request, text)
        return redirect("rules")

    view.__name__ = change.__name__
    return view


@changing
def rule_move(request, pk, actor):
    """One step up or down (the buttons), or straight to a position (a drag on the list)."""
    current = get_object_or_404(PolicyRule, pk=pk).position
    if "position" in request.POST:
        position = request.POST["position"]
        if not (position.isascii() and position.isdigit()):
            raise rules.RuleError(["The position must be a whole number."])
        rule = rules.move_rule(pk, int(position), actor)
    else:
        step = {"up": -1, "down": 1}.get(request.POST.get("direction"))
        if step is None:
            raise rules.RuleError(["Choose up or down."])
        rule = rules.move_rule(pk, current + step, actor)
    return f"Moved {rule} to position {rule.position}."


@changing
def rule_enable(request, pk, actor):
    rule = rules.set_rule_enabled(pk, request.POST.get("enabled") == "on", actor)
    return f"{'Enabled' if rule.enabled else 'Disabled'} {rule}."


@permission_or_403("approvals.delete_policyrule")
def rule_delete(request, pk):
    rule = get_object_or_404(PolicyRule.objects.select_related("server", "client"), pk=pk)
    if request.method == "POST":
        try:
            rules.delete_rule(rule.pk, Actor.user(request.user))
        except PolicyRule.DoesNotExist:
            raise Http404("No such rule.") from None
        messages.success(request, f"Deleted {rule}.")
        return redirect("rules")
    return render(request, "approvals/rule_delete.html", {"rule": rule, "summary": rule_notes.summary(rule)})


@permission_or_403(READ_RULES)
def policy_try(request):
    """One form of four, each with its own prefix; the one whose field the query names is tried."""
    form = TryForm(request.GET if "tool" in request.GET else None)
    asking = TryPermissionForm(request.GET if "ask-agent_tool" in request.GET else None, prefix="ask")
    reading = TryReadForm(request.GET if "read-uri" in request.GET else None, prefix="read")
    getting = TryPromptForm(request.GET if "prompt-prompt" in request.GET else None, prefix="prompt")
    tried = form.call() if form.is_bound and form.is_valid() else None
    outcome = trial.try_call(*tried) if tried else None
    for bound, attempt in ((asking, trial.try_permission), (reading, trial.try_read), (getting, trial.try_prompt)):
        if bound.is_bound and bound.is_valid():
            outcome = attempt(*bound.request())
    context = {"form": form, "asking": asking, "reading": reading, "getting": getting, "outcome": outcome}
    return render(request, "approvals/policy_try.html", context)
