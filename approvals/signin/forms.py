"""The sign-in forms (the console's and Django admin's), refusing a locked-out name or address before any password
is checked."""

import math

from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AuthenticationForm
from django.core.exceptions import ValidationError

from approvals.signin import throttle
from approvals.signin.signals import client_address


class Throttled:
    def clean(self):
        left = throttle.seconds_locked(self.cleaned_data.get("username") or "", client_address(self.request))
        if left > 0:
            minutes = math.ceil(left / 60)
            raise ValidationError(
                "Too many failed sign-ins for this username or from this address. "
                f"Try again in {minutes} minute{'s' if minutes != 1 else ''}.",
                code="throttled",
            )
        return super().clean()


class ThrottledAuthenticationForm(Throttled, AuthenticationForm):
    pass


class ThrottledAdminAuthenticationForm(Throttled, AdminAuthenticationForm):
    pass
