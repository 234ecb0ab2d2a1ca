"""Review: what needs review, one entry's review (a tool, resource, template or prompt), and accept and reject."""

from itertools import groupby

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from approvals.audit.chain import Actor
from approvals.catalog import review
from approvals.catalog.models import Server, Tool
from approvals.catalog.surface_sync import BY_LABEL
from approvals.display.history import history
from approvals.forms.fields import whole_number
from approvals.protocol.hidden_text import Mentions
from approvals.views.catalog import PAGE_SIZE
from approvals.views.decorators import admin_required, live_page, role_required

MAX_NOTE = 500
TOOLS = "tools"


def model_of(kind: str):
    if kind == TOOLS:
        return Tool
    if kind not in BY_LABEL:
        raise Http404("no such kind of entry")
    return BY_LABEL[kind].model


def kind_of(item) -> str:
    return TOOLS if isinstance(item, Tool) else next(k.label for k in BY_LABEL.values() if k.model is type(item))


def display_noun(kind: str) -> str:
    return "tool" if kind == TOOLS else BY_LABEL[kind].noun


def review_url(item) -> str:
    if isinstance(item, Tool):
        return reverse("tool_review", args=[item.pk])
    return reverse("entry_review", args=[kind_of(item), item.pk])


def row_of(shown: review.Review) -> dict:
    kind = kind_of(shown.item)
    return {"review": shown, "kind": kind, "noun": display_noun(kind), "url": review_url(shown.item)}


# The review list's order: what hides text first, then what changed, then what is new.
RISKS = [("warned", "with warnings"), ("changed", "changed"), ("new", "new")]


def risk_of(shown: review.Review) -> str:
    return "warned" if shown.hidden else "new" if shown.is_new else "changed"


def by_risk(items: list) -> list[review.Review]:
    """The reviews of `items`, riskiest first (a warned change before a warned newcomer), then by server and name."""
    mentions = {}
    reviews = []
    for item in items:
        if item.server_id not in mentions:
            mentions[item.server_id] = Mentions(review.other_tool_names(item.server_id))
        reviews.append(review.review_of(item, mentions[item.server_id]))
    ranks = {risk: rank for rank, (risk, _) in enumerate(RISKS)}
    return sorted(
        reviews,
        key=lambda shown: (
            ranks[risk_of(shown)],
            shown.is_new,
            shown.item.server.name,
            not isinstance(shown.item, Tool),
            shown.item.exposed_name,
        ),
    )


@role_required
@live_page
def review_list(request):
    """What awaits review, riskiest first, a page at a time, each risk split by server for its bulk decision;
    narrowed by `?server=` and `?q=`."""
    server = Server.objects.filter(slug=request.GET.get("server", "")).first()
    query = request.GET.get("q", "").strip()
    tools = review.needs_review(server)
    surface = review.surface_needing_review(server)
    if query:
        tools = tools.filter(exposed_name__icontains=query)
        surface = [item for item in surface if query.lower() in item.exposed_name.lower()]
    reviews = by_risk([*tools, *surface])
    page = Paginator(reviews, PAGE_SIZE).get_page(request.GET.get("page"))
    groups = [
        {"risk": dict(RISKS)[risk], "server": listed, "rows": [row_of(shown) for shown in rows]}
        for (risk, listed), rows in groupby(page.object_list, key=lambda shown: (risk_of(shown), shown.item.server))
    ]
    declined = [
        {"item": item, "url": review_url(item), "noun": display_noun(kind_of(item))}
        for item in [
            *Tool.objects.select_related("server").filter(status=Tool.Status.DECLINED)[:PAGE_SIZE],
            *review.surface_declined(),
        ]
    ]
    context = {
        "groups": groups,
        "counts": [(label, sum(risk_of(shown) == risk for shown in reviews)) for risk, label in RISKS],
        "declined": declined,
        "page": page,
        "server": server,
        "servers": Server.objects.filter(pk__in=review.needs_review().values("server_id")),
        "query": query,
    }
    return render(request, "approvals/review_list.html", context)


@role_required
def entry_review(request, pk, kind=TOOLS):
    """One entry's review; for a resource, template or prompt, its history too (a tool's is on the tool's page)."""
    item = get_object_or_404(model_of(kind).objects.select_related("server"), pk=pk)
    context = {**row_of(review.review_of(item)), "item": item, "history": history(item) if kind != TOOLS else None}
    if kind == TOOLS:
        context["decide_urls"] = (reverse("tool_accept", args=[pk]), reverse("tool_reject", args=[pk]))
    else:
        context["decide_urls"] = (reverse("entry_accept", args=[kind, pk]), reverse("entry_reject", args=[kind, pk]))
    return render(request, "approvals/entry_review.html", context)


def note_of(request) -> str:
    return request.POST.get("note", "").strip()[:MAX_NOTE]


def report(request, outcome):
    (messages.success if outcome.done else messages.error)(request, outcome.message[:1].upper() + outcome.message[1:])


@require_POST
@admin_required
def entry_decide(request, pk, accept: bool, kind=TOOLS):
    """Accept or reject the definition the page showed, named by its digest."""
    model = model_of(kind)
    item = get_object_or_404(model, pk=pk)
    decide = review.accept if accept else review.reject
    outcome = decide(item.pk, Actor.user(request.user), note_of(request), request.POST.get("digest", ""), model=model)
    report(request, outcome)
    return redirect(review_url(item))


def picked_entries(request) -> list[tuple]:
    """The (model, pk, digest) of each entry selected: a tool as "pk:digest", anything else as "kind:pk:digest"."""
    picked = [(TOOLS, *value.split(":", 1)) for value in request.POST.getlist("tools")]
    picked += [tuple(value.split(":", 2)) for value in request.POST.getlist("entries")]
    return [
        (model_of(kind), whole_number(pk), digest)
        for kind, pk, digest in (entry for entry in picked if len(entry) == 3)
        if whole_number(pk) is not None and (kind == TOOLS or kind in BY_LABEL)
    ]


@require_POST
@admin_required
def server_decide(request, slug, accept: bool):
    """Accept or reject several entries of one server at once, each as the digest the page showed; one message
    says what came of them all."""
    server = get_object_or_404(Server, slug=slug)
    chosen = [
        (model, pk, digest)
        for model, pk, digest in picked_entries(request)
        if model.objects.filter(pk=pk, server=server, status=Tool.Status.NEEDS_REVIEW).exists()
    ]
    verb = "accept" if accept else "reject"
    if not chosen:
        messages.warning(request, f"Select the entries to {verb}.")
        return redirect("review")
    decide = review.accept if accept else review.reject
    actor, note = Actor.user(request.user), note_of(request)
    outcomes = [decide(pk, actor, note, digest, model=model) for model, pk, digest in chosen]
    done = sum(outcome.done for outcome in outcomes)
    if done:
        messages.success(request, f"{verb.capitalize()}ed {done} of {len(outcomes)} entries of {server.name}.")
    refused = [outcome.message for outcome in outcomes if not outcome.done]
    if refused:
        messages.error(request, f"{len(refused)} not {verb}ed: " + " ".join(refused))
    return redirect("review")
