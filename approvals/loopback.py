"""Which host names and addresses stay on this machine.

Imported by settings, so it may use the standard library only.
"""

import ipaddress

LOOPBACK_NAMES = {"localhost", ".localhost"}


def is_loopback_address(address: str) -> bool:
    try:
        return ipaddress.ip_address(address.strip("[]")).is_loopback
    except ValueError:
        return False


def is_loopback_host(host: str) -> bool:
    """An ALLOWED_HOSTS entry or Host name that can only reach this machine (RFC 6761 keeps *.localhost local)."""
    name = host.lower().rstrip(".")
    return name in LOOPBACK_NAMES or name.endswith(".localhost") or is_loopback_address(name)
