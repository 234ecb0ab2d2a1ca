"""Named periods an auditor picks instead of typing two dates: the last day, week, 30 days, calendar month."""

from datetime import datetime, timedelta

from django import forms

PRESETS = [
    ("", "Dates below"),
    ("24h", "Last 24 hours"),
    ("7d", "Last 7 days"),
    ("30d", "Last 30 days"),
    ("month", "Last calendar month"),
]


def preset_field() -> forms.ChoiceField:
    return forms.ChoiceField(choices=PRESETS, required=False, label="Period")


def resolve(preset: str, now: datetime) -> tuple[datetime, datetime]:
    """The (since, until) a preset stands for, ending at now or, for a month, at this month's first instant."""
    if preset == "month":
        until = now.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
        return (until - timedelta(days=1)).replace(day=1), until
    days = {"24h": 1, "7d": 7, "30d": 30}[preset]
    return now - timedelta(days=days), now
