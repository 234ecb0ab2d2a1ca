from asgiref.sync import iscoroutinefunction, markcoroutinefunction

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
