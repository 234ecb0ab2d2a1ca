"""Times on the pages read either way from now: "3 minutes ago", "in 30 days"."""

from datetime import timedelta

import pytest
from django.utils import timezone

from approvals.templatetags.console import ago


@pytest.mark.parametrize(
    ("offset", "words"),
    [
        (timedelta(seconds=-20), "just now"),
        (timedelta(seconds=20), "just now"),
        (timedelta(minutes=-3), "3\xa0minutes ago"),
        (timedelta(hours=5), "in 5\xa0hours"),
        (timedelta(hours=-30), "30\xa0hours ago"),
        (timedelta(days=30), "in 30\xa0days"),
        (timedelta(days=-2, hours=-3), "2\xa0days ago"),
        (timedelta(days=800), "in 2\xa0years"),
    ],
)
def test_it_says_how_far_a_time_is_from_now_in_the_past_and_the_future(offset, words):
    assert ago(timezone.now() + offset) == words
