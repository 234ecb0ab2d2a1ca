"""The sign-in forms (the console's and Django admin's): each try is counted before its password is checked, and
one past a limit, or from a locked-out name or address, is refused unchecked."""

from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AuthenticationForm
from django.core.exceptions import ValidationError

from approvals.signin import throttle
from approvals.signin.signals import begin_try, client_address, try_again


class Throttled:
    def clean(self):
        username, password = self.cleaned_data.get("username") or "", self.cleaned_data.get("password")
        if not (username and password):
            # Nothing is checked, so nothing is counted: the fields' own errors say what is missing.
            return super().clean()
        counted, left = begin_try(username, client_address(self.request))
        if left > 0:
            raise ValidationError(
                f"Too many failed sign-ins for this username or from this address. {try_again(left)}", code="throttled"
            )
        if self.request is not None:
            setattr(self.request, throttle.COUNTED, counted)
        return super().clean()


class ThrottledAuthenticationForm(Throttled, AuthenticationForm):
    pass


class ThrottledAdminAuthenticationForm(Throttled, AdminAuthenticationForm):
    pass
