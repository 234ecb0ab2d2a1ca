"""oauthlib's server cut down to the grants the console serves: the authorization code with PKCE S256, and its
refresh tokens. The password, implicit, client-credentials and device grants are not there at all, so no
token request ever reaches a check of a person's password, and none is answered by a grant the console
would have to turn into a client token without a person's consent."""

from oauthlib.oauth2 import Server

GRANT_TYPES = ("authorization_code", "refresh_token")


class ConsoleServer(Server):
    def __init__(self, request_validator, *args, **kwargs):
        super().__init__(request_validator, *args, **kwargs)
        self._grant_types = {name: self._grant_types[name] for name in GRANT_TYPES}
        self._response_types = {"code": self.auth_grant}
        # S256 alone, refused before the consent page shows rather than when the code is made.
        methods = self.auth_grant._code_challenge_methods
        self.auth_grant._code_challenge_methods = {"S256": methods["S256"]}
