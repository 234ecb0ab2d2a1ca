"""Sign-ins and failed sign-ins, into the audit log. Connected in ApprovalsConfig.ready()."""

import math

from django.conf import settings
from django.contrib.auth.signals import user_logged_in, user_login_failed

from approvals.audit import chain
from approvals.audit.chain import SYSTEM, Actor
from approvals.signin import throttle

# Where an SSO sign-in leaves the provider's issuer and the person's subject there, on the request, for the audit.
IDENTITY = "sso_identity"


def client_address(request):
    return request.META.get("REMOTE_ADDR", "") if request is not None else ""


def logged_in(sender, request, user, **kwargs):
    identity = getattr(request, IDENTITY, None)
    if identity is not None:
        how = {"method": "sso", **identity}
    else:
        how = {"method": "password", **({} if settings.LOCAL_LOGIN else {"break_glass": True})}
    chain.record("user.login", Actor.user(user), data={"address": client_address(request), **how})
    throttle.note_success(user.get_username(), getattr(request, throttle.COUNTED, None))


def login_failed(sender, credentials, request=None, **kwargs):
    if "username" not in credentials:
        # An SSO callback that signed nobody in: it audits its own failures, and has no name to count.
        return
    # Only the name that was tried: never the password, not even Django's masked copy.
    username, address = str(credentials.get("username", ""))[:150], client_address(request)
    chain.record("user.login_failed", SYSTEM, data={"username": username, "address": address})
    locked = throttle.note_failure(username, address, getattr(request, throttle.COUNTED, None))
    if locked:
        record_lockout(username, address, locked)


def begin_try(username: str, address: str) -> tuple[throttle.Try, float]:
    """Count a try before its credential is checked, starting (and auditing) a lockout that it takes past a limit;
    with how long the name or address stays locked out, 0 when the credential may be checked."""
    counted = throttle.count_try(username, address)
    started = throttle.lock(counted, counted.past_limits())
    if started:
        record_lockout(username, address, started)
    left = throttle.seconds_locked(username, address)
    if left > 0:
        throttle.note_refused(counted)
    return counted, left


def try_again(seconds: float) -> str:
    minutes = math.ceil(seconds / 60)
    return f"Try again in {minutes} minute{'s' if minutes != 1 else ''}."


def record_lockout(username: str, address: str, locked: list[str]):
    chain.record(
        "user.login_locked",
        SYSTEM,
        data={"username": username, "address": address, "locked": locked, "seconds": settings.SIGNIN_LOCKOUT_SECONDS},
    )


def connect():
    user_logged_in.connect(logged_in, dispatch_uid="approvals.signin.user_logged_in")
    user_login_failed.connect(login_failed, dispatch_uid="approvals.signin.user_login_failed")
