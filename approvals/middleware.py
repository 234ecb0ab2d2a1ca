import logging

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
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
