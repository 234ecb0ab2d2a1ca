"""The sign-in forms (the console's and Django admin's): each try is counted before its password is checked, and
one past a limit, or from a locked-out name or address, is refused unchecked."""

import math

from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AuthenticationForm
from django.core.exceptions import ValidationError

from approvals.signin import throttle
from approvals.signin.signals import client_address, record_lockout


class Throttled:
    def clean(self):
        username, password = self.cleaned_data.get("username") or "", self.cleaned_data.get("password")
        if not (username and password):
            # Nothing is checked, so nothing is counted: the fields' own errors say what is missing.
            return super().clean()
        address = client_address(self.request)
        counted = throttle.count_try(username, address)
        started = throttle.lock(counted, counted.past_limits())
        if started:
            record_lockout(username, address, started)
        left = throttle.seconds_locked(username, address)
        if left > 0:
            throttle.note_refused(counted)
            minutes = math.ceil(left / 60)
            raise ValidationError(
                "Too many failed sign-ins for this username or from this address. "
                f"Try again in {minutes} minute{'s' if minutes != 1 else ''}.",
                code="throttled",
            )
        if self.request is not None:
            setattr(self.request, throttle.COUNTED, counted)
        return super().clean()


class ThrottledAuthenticationForm(Throttled, AuthenticationForm):
    pass


class ThrottledAdminAuthenticationForm(Throttled, AdminAuthenticationForm):
    pass
