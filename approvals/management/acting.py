"""Who a management command acts as, so that its decisions are audited under a person's name."""

import os
import pwd

from django.contrib.auth import get_user_model
from django.core.management.base import CommandError

OPERATOR_VARIABLE = "CONSOLE_OPERATOR"


def acting_user(username, may, needs: str):
    """--as USERNAME, else $CONSOLE_OPERATOR, else the only active superuser; refused unless `may(user)`.

    `needs` completes "USER may not ..." when the user lacks the right.
    """
    users = get_user_model().objects.filter(is_active=True)
    username = username or os.environ.get(OPERATOR_VARIABLE)
    if username:
        user = users.filter(username=username).first()
        if user is None:
            raise CommandError(f"no active user named {username!r}")
    else:
        superusers = list(users.filter(is_superuser=True)[:2])
        if len(superusers) != 1:
            raise CommandError(f"name the acting user with --as USERNAME or ${OPERATOR_VARIABLE}")
        user = superusers[0]
    if not may(user):
        raise CommandError(f"{user.get_username()} may not {needs}")
    return user


def host_account() -> str:
    """The account on this host that runs the command, by its real uid: `--as` and $USER are only claims."""
    uid = os.getuid()
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"
