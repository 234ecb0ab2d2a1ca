from django.conf import settings
from django.contrib.auth.backends import ModelBackend


class PasswordBackend(ModelBackend):
    """Django's usernames and passwords: everyone's while LOCAL_LOGIN is on; while it is off, only superusers' (the
    break-glass path of docs/sso.md), and the sessions others signed in with a password end."""

    def user_can_authenticate(self, user):
        return super().user_can_authenticate(user) and (settings.LOCAL_LOGIN or user.is_superuser)
