"""Which console person a Slack user decides as.

A person links their Slack user once: a click by a Slack user nobody linked yet is answered, to that user alone,
with a link to the console carrying a signed note of who they are in Slack; signed in, the person confirms it on
their account page. Where SLACK_LINK_BY_EMAIL allows, a Slack user whose confirmed email is that of exactly one
active person is linked at their first click instead. Each link and unlink is audited.
"""

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core import signing
from django.db import transaction
from django.urls import reverse

from approvals.audit import chain
from approvals.audit.chain import Actor
from approvals.roles import DECIDE_CALLS, has_role
from approvals.slack import transport
from approvals.slack.models import SlackLink

SALT = "approvals.slack.link"
# How long the link a Slack user is sent may be followed.
LINK_MAX_AGE_SECONDS = 15 * 60


def person_for(team_id: str, slack_user_id: str):
    link = SlackLink.objects.select_related("user").filter(team_id=team_id, slack_user_id=slack_user_id).first()
    return link.user if link is not None else None


def may_decide(person) -> str:
    """Why the person may not decide calls, or "": what the queue's pages check, role and permission."""
    if not person.is_active or not has_role(person):
        return f"The console person {person.get_username()} holds no role in the console."
    if not person.has_perm(DECIDE_CALLS):
        return f"The console person {person.get_username()} may not decide calls: their role does not allow it."
    return ""


def link_url(base_url: str, team_id: str, slack_user_id: str, name: str) -> str:
    """Where a Slack user confirms, signed in to the console, that they decide as that person."""
    note = signing.dumps({"team": team_id, "user": slack_user_id, "name": name}, salt=SALT)
    return base_url + reverse("slack_link", args=[note])


def read_note(note: str) -> dict | None:
    """The Slack user a link names, None when it is not the console's, or is older than LINK_MAX_AGE_SECONDS."""
    try:
        found = signing.loads(note, salt=SALT, max_age=LINK_MAX_AGE_SECONDS)
    except signing.BadSignature:
        return None
    return found if isinstance(found, dict) and {"team", "user", "name"} <= found.keys() else None


@transaction.atomic
def link(person, team_id: str, slack_user_id: str, name: str, how: str) -> SlackLink:
    """The Slack user decides as `person` from now on, in place of whoever they were linked to."""
    found, _ = SlackLink.objects.update_or_create(
        team_id=team_id,
        slack_user_id=slack_user_id,
        defaults={"user": person, "slack_name": name[:150], "how": how},
    )
    data = {"slack_user": found.identity, "slack_name": found.slack_name, "how": how}
    chain.record("slack.linked", Actor.user(person), data=data)
    return found


@transaction.atomic
def unlink(person, link_id) -> bool:
    found = SlackLink.objects.filter(pk=link_id, user=person).first()
    if found is None:
        return False
    found.delete()
    chain.record("slack.unlinked", Actor.user(person), data={"slack_user": found.identity})
    return True


def by_email(team_id: str, slack_user_id: str):
    """The person the Slack user is linked to by a confirmed email, where allowed; None otherwise.

    SlackError when Slack cannot say who the user is."""
    if not settings.SLACK_LINK_BY_EMAIL:
        return None
    user = transport.call("users.info", {"user": slack_user_id}).get("user") or {}
    email = (user.get("profile") or {}).get("email") or ""
    if not email or user.get("is_email_confirmed") is not True or user.get("deleted") or user.get("is_bot"):
        return None
    people = list(get_user_model().objects.filter(email__iexact=email, is_active=True)[:2])
    if len(people) != 1:
        return None
    link(people[0], team_id, slack_user_id, str(user.get("name") or ""), SlackLink.How.EMAIL)
    return people[0]
