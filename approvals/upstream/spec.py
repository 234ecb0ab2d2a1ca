"""What the console knows about an upstream server before and after connecting."""

from collections.abc import Mapping
from dataclasses import dataclass, field

from .authorizing import Authorizer
from .isolation import Isolation

HTTP = "http"
STDIO = "stdio"


@dataclass(frozen=True)
class ServerSpec:
    name: str
    transport: str  # HTTP or STDIO
    url: str = ""
    command: tuple[str, ...] = ()
    headers: Mapping[str, str] = field(default_factory=dict)  # sent on every HTTP request
    env: Mapping[str, str] = field(default_factory=dict)  # added to the child's environment
    cwd: str | None = None
    isolation: Isolation = field(default_factory=Isolation)  # how a stdio child is kept from the console
    revision: str = ""  # the revision negotiated last time, tried first
    timeout: float = 30.0  # bounds every single wait
    list_max_pages: int = 100
    list_max_bytes: int = 8 * 1024 * 1024
    result_max_bytes: int = 4 * 1024 * 1024  # a read resource, a prompt or a completion
    # Whose connection this is on a server with per-person OAuth ("" = the shared one): sessions differ by it.
    identity: str = ""
    # Who supplies the OAuth bearer; it holds live state, so two specs alike but for it are the same server.
    authorizer: Authorizer | None = field(default=None, compare=False)


@dataclass(frozen=True)
class ServerIdentity:
    revision: str
    era: str
    server_info: dict
    capabilities: dict
    instructions: str
