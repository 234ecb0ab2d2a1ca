"""A period's decisions counted by outcome in buckets sized to it: hours for a day or two, days up to a quarter."""

from datetime import UTC, datetime, timedelta

from django.db.models import Count
from django.db.models.functions import TruncDay, TruncHour, TruncMonth

from approvals.audit.models import AuditEvent
from approvals.audit_log.report import decided, outcome

OUTCOMES = ("approved", "denied", "allowed")


def bucket_size(since: datetime, until: datetime) -> str:
    span = until - since
    if span <= timedelta(days=2):
        return "hour"
    return "day" if span <= timedelta(days=92) else "month"


def starts(since: datetime, until: datetime, size: str) -> list[datetime]:
    """Every bucket's start, so that a quiet hour or day shows as an empty column rather than none."""
    at = since.astimezone(UTC).replace(minute=0, second=0, microsecond=0)
    if size != "hour":
        at = at.replace(hour=0)
    if size == "month":
        at = at.replace(day=1)
    found = []
    while at < until:
        found.append(at)
        if size == "month":
            at = (at + timedelta(days=32)).replace(day=1)
        else:
            at += timedelta(hours=1) if size == "hour" else timedelta(days=1)
    return found


def over_time(since: datetime, until: datetime) -> tuple[str, list[datetime], dict[str, list[int]]]:
    """The bucket size, each bucket's start, and per outcome its count in each bucket."""
    size = bucket_size(since, until)
    trunc = {"hour": TruncHour, "day": TruncDay, "month": TruncMonth}[size]("at", tzinfo=UTC)
    rows = (
        decided(AuditEvent.objects.filter(at__gte=since, at__lt=until))
        .annotate(bucket=trunc, outcome=outcome())
        .values("bucket", "outcome")
        .annotate(count=Count("id"))
    )
    buckets = starts(since, until, size)
    index = {start: position for position, start in enumerate(buckets)}
    counts = {name: [0] * len(buckets) for name in OUTCOMES}
    for row in rows:
        counts[row["outcome"]][index[row["bucket"]]] += row["count"]
    return size, buckets, counts
