"""Webhook endpoints, for admins only (a URL may itself be a credential): the list, a new one, one endpoint's
settings and deliveries with every attempt, a new secret, deleting one, and redelivering an event.

A secret appears only on the response page to the POST that made it.
"""

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from approvals.views.decorators import permission_or_403
from approvals.webhooks import endpoints
from approvals.webhooks.forms import EndpointForm
from approvals.webhooks.models import WebhookDelivery, WebhookEndpoint

MANAGE_WEBHOOKS = "approvals.manage_webhooks"
DELIVERIES_SHOWN = 50


@permission_or_403(MANAGE_WEBHOOKS)
def webhook_list(request):
    listed = list(WebhookEndpoint.objects.all())
    for endpoint in listed:
        endpoint.health = endpoints.health(endpoint)
    return render(request, "approvals/webhook_list.html", {"endpoints": listed})


@never_cache
@permission_or_403(MANAGE_WEBHOOKS)
def webhook_add(request):
    form = EndpointForm(request.POST or None, initial={"console_url": request.build_absolute_uri("/")})
    if request.method == "POST" and form.is_valid():
        try:
            endpoint, secret = endpoints.create_endpoint(form.cleaned_data, request.user)
        except endpoints.EndpointError as exc:
            marked(form, exc)
        else:
            return secret_page(request, endpoint, secret, "Webhook endpoint added")
    return render(request, "approvals/webhook_form.html", {"form": form})


def marked(form, refusal: endpoints.EndpointError):
    for name, errors in refusal.fields.items():
        form.add_error(name or None, errors)


def secret_page(request, endpoint, secret, title):
    return render(request, "approvals/webhook_secret.html", {"endpoint": endpoint, "secret": secret, "title": title})


@permission_or_403(MANAGE_WEBHOOKS)
def webhook_detail(request, pk):
    endpoint = get_object_or_404(WebhookEndpoint, pk=pk)
    form = EndpointForm(request.POST or None, initial=endpoints.editable(endpoint))
    if request.method == "POST" and form.is_valid():
        try:
            changed = endpoints.change_endpoint(endpoint, form.cleaned_data, request.user)
        except endpoints.EndpointError as exc:
            marked(form, exc)
        else:
            messages.success(request, "Saved." if changed else "Nothing changed.")
            return redirect("webhook", pk=endpoint.pk)
    deliveries = endpoint.deliveries.prefetch_related("attempt_rows")[:DELIVERIES_SHOWN]
    context = {"endpoint": endpoint, "form": form, "deliveries": deliveries, "health": endpoints.health(endpoint)}
    return render(request, "approvals/webhook_detail.html", context)


@require_POST
@permission_or_403(MANAGE_WEBHOOKS)
def webhook_test(request, pk):
    endpoint = get_object_or_404(WebhookEndpoint, pk=pk)
    if not endpoint.enabled:
        messages.warning(request, "The endpoint is disabled: enable it to send it anything.")
    else:
        delivery = endpoints.send_test(endpoint, request.user)
        messages.success(request, f"A test event ({delivery.message_id}) is on its way; reload to see the answer.")
    return redirect("webhook", pk=endpoint.pk)


@never_cache
@permission_or_403(MANAGE_WEBHOOKS)
def webhook_rotate(request, pk):
    endpoint = get_object_or_404(WebhookEndpoint, pk=pk)
    if request.method == "POST":
        secret = endpoints.rotate_secret(endpoint, request.user)
        return secret_page(request, endpoint, secret, "New secret")
    return render(request, "approvals/webhook_confirm.html", {"endpoint": endpoint, "verb": "Rotate the secret of"})


@permission_or_403(MANAGE_WEBHOOKS)
def webhook_delete(request, pk):
    endpoint = get_object_or_404(WebhookEndpoint, pk=pk)
    if request.method == "POST":
        endpoints.delete_endpoint(endpoint, request.user)
        messages.success(request, f"Deleted the endpoint {endpoint.url}.")
        return redirect("webhooks")
    return render(request, "approvals/webhook_confirm.html", {"endpoint": endpoint, "verb": "Delete"})


@require_POST
@permission_or_403(MANAGE_WEBHOOKS)
def webhook_redeliver(request, pk):
    delivery = get_object_or_404(WebhookDelivery.objects.select_related("endpoint"), pk=pk)
    if endpoints.redeliver(delivery, request.user):
        sent = f"{delivery.event_type} {delivery.message_id}"
        messages.success(request, f"{sent} is being sent again; reload to see how.")
    else:
        messages.error(request, "The task queue did not take the redelivery; nothing was sent. Try again shortly.")
    return redirect("webhook", pk=delivery.endpoint_id)
