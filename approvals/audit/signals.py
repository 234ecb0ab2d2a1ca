"""Sign-ins and failed sign-ins, into the audit log. Connected in ApprovalsConfig.ready()."""

from django.contrib.auth.signals import user_logged_in, user_login_failed

from approvals.audit import chain
from approvals.audit.chain import SYSTEM, Actor


def client_address(request):
    return request.META.get("REMOTE_ADDR", "") if request is not None else ""


def logged_in(sender, request, user, **kwargs):
    chain.record("user.login", Actor.user(user), data={"address": client_address(request)})


def login_failed(sender, credentials, request=None, **kwargs):
    # Only the name that was tried: never the password, not even Django's masked copy.
    username = credentials.get("username", "")
    chain.record(
        "user.login_failed", SYSTEM, data={"username": str(username)[:150], "address": client_address(request)}
    )


def connect():
    user_logged_in.connect(logged_in, dispatch_uid="approvals.audit.user_logged_in")
    user_login_failed.connect(login_failed, dispatch_uid="approvals.audit.user_login_failed")
