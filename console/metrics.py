"""/metrics: the deployment's Prometheus metrics, in the text format, for a scraper.

The samples every process counted come from their files (approvals.observe.metrics); what the
database holds (calls waiting for a decision, entries awaiting review, the last verification of
the audit chain, how far the SIEM is behind) is read at scrape time, so that it is right however many processes run, and
however they stopped.

A scraper sends METRICS_TOKEN as a bearer token; without one set, only a client on this machine
that reached the console directly may scrape. Like the probes (console.health), it is answered by a
middleware ahead of Django's Host check: a scraper names a container or an address, and the answer
neither uses the Host nor says anything worth forging it for.
"""

import hmac
import logging

from django.conf import settings
from django.http import HttpResponse, HttpResponseNotAllowed
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.multiprocess import MultiProcessCollector

from approvals.audit import siem_forwarding
from approvals.audit.models import AuditVerification
from approvals.calls.models import Call
from approvals.catalog import review
from approvals.gateway.auth import FORWARDING_HEADERS, bearer_secret
from approvals.loopback import is_loopback_address
from approvals.observe import metrics

log = logging.getLogger(__name__)

PATH = "/metrics"


class DatabaseState:
    """The gauges whose truth is a row count or the last verification, read when scraped."""

    def collect(self):
        try:
            pending = Call.objects.filter(status=Call.Status.PENDING).count()
            to_review = review.review_count()
            last = AuditVerification.objects.filter(finished_at__isnull=False).order_by("-finished_at", "-id").first()
            lag = siem_forwarding.lag()
        except Exception:
            # The processes' own samples are still worth a scrape; the database's state is left out of this one.
            log.warning("the metrics read from the database could not be read", exc_info=True)
            return
        yield GaugeMetricFamily("mcp_console_pending_calls", "Calls waiting for an operator's decision.", pending)
        yield GaugeMetricFamily(
            "mcp_console_review_pending",
            "Tools, resources, templates and prompts whose new or changed definition awaits an admin's review.",
            to_review,
        )
        yield GaugeMetricFamily(
            "mcp_console_audit_verification_ok",
            "1 when the last finished verification of the audit chain found it intact, else 0 (also before any).",
            1 if last is not None and last.ok else 0,
        )
        if last is not None:
            yield GaugeMetricFamily(
                "mcp_console_audit_verification_timestamp_seconds",
                "When the last verification of the audit chain finished.",
                last.finished_at.timestamp(),
            )
        if lag is not None:
            yield from forwarding_lag(lag)


def forwarding_lag(lag: siem_forwarding.Lag):
    """How far the SIEM is behind (AUDIT_FORWARD_URL set); where it is and why it failed stay on the audit page."""
    yield GaugeMetricFamily(
        "mcp_console_audit_forward_events_behind", "Audit events the SIEM has not acknowledged.", lag.events
    )
    yield GaugeMetricFamily(
        "mcp_console_audit_forward_seconds_behind",
        "Age of the oldest audit event the SIEM has not acknowledged (0 when none).",
        lag.seconds,
    )
    yield GaugeMetricFamily(
        "mcp_console_audit_forward_failing",
        "1 when the last batch sent to the SIEM failed, else 0.",
        1 if lag.error else 0,
    )


def exposition() -> bytes:
    metrics.forget_dead_processes()
    registry = CollectorRegistry()
    MultiProcessCollector(registry, path=metrics.folder())
    registry.register(DatabaseState())
    return generate_latest(registry)


def refusal(request) -> HttpResponse | None:
    """Why this request may not scrape, as the response to give it; None when it may."""
    expected = settings.METRICS_TOKEN
    if expected:
        header = request.headers.get("Authorization", "")
        if not header:
            challenge = {"WWW-Authenticate": "Bearer"}
            return plain(401, "Unauthorized: send Authorization: Bearer <METRICS_TOKEN>", challenge)
        if not hmac.compare_digest(bearer_secret(header).encode(), expected.encode()):
            return plain(403, "Forbidden: that is not the METRICS_TOKEN this console was given")
        return None
    direct = not any(name in request.META for name in FORWARDING_HEADERS)
    if direct and is_loopback_address(request.META.get("REMOTE_ADDR") or ""):
        return None
    return plain(403, "Forbidden: without METRICS_TOKEN set, only clients on this machine may scrape /metrics")


def plain(status: int, text: str, headers: dict | None = None) -> HttpResponse:
    response = HttpResponse(text + "\n", status=status, content_type="text/plain; charset=utf-8", headers=headers)
    response["Cache-Control"] = "no-store"
    return response


def scrape(request) -> HttpResponse:
    if request.method not in ("GET", "HEAD"):
        return HttpResponseNotAllowed(["GET", "HEAD"])
    refused = refusal(request)
    if refused is not None:
        return refused
    try:
        body = exposition()
    except Exception as error:
        log.exception("the metrics could not be read from %s", metrics.folder())
        return plain(503, f"Service Unavailable: the metrics could not be read ({type(error).__name__})")
    response = HttpResponse(body, content_type=CONTENT_TYPE_LATEST)
    response["Cache-Control"] = "no-store"
    return response


def endpoint(get_response):
    """Answer /metrics before any middleware that checks the Host or reads a session."""

    def middleware(request):
        if request.path_info == PATH:
            return scrape(request)
        return get_response(request)

    return middleware
