"""Client secrets at the OAuth token endpoint, throttled as passwords are at sign-in: each try is counted against
the client id (as a username) and the address before the secret is checked; a wrong one is audited and counted as a
failed sign-in, and one past a limit, or from a locked-out client or address, is refused unchecked, the right
secret too. The address's count is the one /login/ keeps, so guessing here locks the password form out as well."""

import base64
import binascii
from functools import wraps
from urllib.parse import unquote_plus

from django.contrib.auth.signals import user_login_failed
from django.http import JsonResponse

from approvals.signin import throttle
from approvals.signin.signals import begin_try, client_address, try_again


def presented_client(request) -> str | None:
    """The client id a token request authenticates with a secret (HTTP Basic, or client_secret in the body), "" for
    one that cannot be read; None when the request presents no secret, so that nothing is checked."""
    scheme, _, encoded = request.META.get("HTTP_AUTHORIZATION", "").partition(" ")
    if scheme.lower() == "basic":
        try:
            return unquote_plus(base64.b64decode(encoded, validate=True).decode().partition(":")[0])
        except (binascii.Error, UnicodeDecodeError):
            return ""
    if request.method == "POST" and "client_secret" in request.POST:
        return request.POST.get("client_id", "")
    return None


def throttled(view):
    """The token endpoint's view, with each client-secret check counted around it."""

    @wraps(view)
    def counted(request, *args, **kwargs):
        client_id = presented_client(request)
        if client_id is None:
            return view(request, *args, **kwargs)
        tried, left = begin_try(client_id, client_address(request))
        if left > 0:
            description = f"Too many failed sign-ins for this client or from this address. {try_again(left)}"
            return JsonResponse({"error": "invalid_client", "error_description": description}, status=401)
        setattr(request, throttle.COUNTED, tried)
        response = view(request, *args, **kwargs)
        if response.status_code == 401:
            # RFC 6749 §5.2: invalid_client is what a wrong secret gets; the sign-in signal audits and counts it.
            user_login_failed.send(__name__, credentials={"username": client_id}, request=request)
        elif response.status_code == 200:
            throttle.note_success(client_id, tried)
        else:
            # Refused before or after the secret was checked: the answer does not say which, so it proves nothing.
            throttle.note_unchecked(tried)
        return response

    return counted
