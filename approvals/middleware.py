import logging

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.http import HttpResponseBadRequest
from django.shortcuts import render
from django.utils.deprecation import MiddlewareMixin

from approvals.db.sealed import CredentialsUnreadable

log = logging.getLogger(__name__)

# Everything an upstream server sends is rendered in these pages, so no inline
# script or style may run and images come only from the console or data: URLs.
POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"
)


def content_security_policy(get_response):
    if iscoroutinefunction(get_response):

        async def middleware(request):
            response = await get_response(request)
            response.setdefault("Content-Security-Policy", POLICY)
            return response

        markcoroutinefunction(middleware)
    else:

        def middleware(request):
            response = get_response(request)
            response.setdefault("Content-Security-Policy", POLICY)
            return response

    return middleware


content_security_policy.sync_capable = True
content_security_policy.async_capable = True


class CredentialsUnreadableMiddleware(MiddlewareMixin):
    """A page that reads a credential the configured key cannot decrypt says so, rather than failing with a 500."""

    def process_exception(self, request, exception):
        if isinstance(exception, CredentialsUnreadable):
            log.error("%s", exception)
            return render(request, "credentials_unreadable.html", {"problem": str(exception)}, status=503)
        return None


# Form bodies, whose fields a page reads; other bodies (the API's JSON) are their readers' to check.
FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")


def holds_nul(request) -> bool:
    values = list(request.GET.lists())
    if request.method == "POST" and request.content_type in FORM_TYPES:
        request.body  # noqa: B018 -- kept, so that a view (the API's) may still read the body the form came in
        values += list(request.POST.lists())
    return any("\x00" in name or any("\x00" in value for value in listed) for name, listed in values)


def refuse_nul(get_response):
    """A NUL in a query or form value is 400: no page takes one, and PostgreSQL refuses it in text.

    Checked once here rather than in each of the filters and lookups that pass such values to a query.
    """
    refused = "Bad Request: a query or form value holds a NUL character."
    if iscoroutinefunction(get_response):

        async def middleware(request):
            return HttpResponseBadRequest(refused) if holds_nul(request) else await get_response(request)

        markcoroutinefunction(middleware)
    else:

        def middleware(request):
            return HttpResponseBadRequest(refused) if holds_nul(request) else get_response(request)

    return middleware


refuse_nul.sync_capable = True
refuse_nul.async_capable = True
