"""The client token a management command names."""

from django.core.management.base import CommandError

from approvals.tokens.models import ClientToken


def named_token(name: str) -> ClientToken:
    token = ClientToken.objects.filter(name=name).first()
    if token is None:
        raise CommandError(f"no token named {name!r}")
    return token
