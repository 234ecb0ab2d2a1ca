"""Credentials at rest: a model field whose value is stored encrypted under CREDENTIALS_KEY, kept outside the database.

CREDENTIALS_KEY is one key or several, comma-separated: the first encrypts, all decrypt, so a key is rotated by
putting the new one first and re-encrypting (`reseal_all`). Each configured key is stretched with HKDF into a
Fernet key (AES-128-CBC with HMAC-SHA256: authenticated), and every stored value names the key that sealed it,
so a value the configured keys cannot open is an error that says so, never a wrong plain value.
"""

import base64
import hashlib
import json
from functools import lru_cache

from cryptography.fernet import Fernet, InvalidToken
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.apps import apps
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import models, transaction

SCHEME = "fernet"


class CredentialsUnreadable(Exception):
    """A stored credential the configured CREDENTIALS_KEY cannot decrypt."""

    def __init__(self, detail: str):
        super().__init__(f"The stored credentials cannot be decrypted with the configured CREDENTIALS_KEY: {detail}.")


def fernet_key(secret: str) -> bytes:
    derived = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=b"console credentials at rest").derive(
        secret.encode()
    )
    return base64.urlsafe_b64encode(derived)


def key_id(key: bytes) -> str:
    # Names a key without revealing it: a digest of the derived key, never of what the admin typed.
    return hashlib.sha256(b"key id:" + key).hexdigest()[:12]


@lru_cache(maxsize=4)
def keyring(configured: str) -> tuple[tuple[str, Fernet], ...]:
    secrets = [part.strip() for part in configured.split(",") if part.strip()]
    if not secrets:
        raise ImproperlyConfigured("CREDENTIALS_KEY is empty: set it to a long random string.")
    return tuple((key_id(key), Fernet(key)) for key in map(fernet_key, secrets))


def configured_keys():
    return keyring(settings.CREDENTIALS_KEY)


def seal(value) -> str:
    """Any JSON value, encrypted under the first configured key: 'fernet:<key id>:<token>'."""
    kid, fernet = configured_keys()[0]
    return f"{SCHEME}:{kid}:{fernet.encrypt(json.dumps(value).encode()).decode()}"


def unseal(stored: str):
    scheme, _, rest = stored.partition(":")
    kid, _, token = rest.partition(":")
    if scheme != SCHEME or not token:
        raise CredentialsUnreadable("a stored value is not encrypted")
    fernet = dict(configured_keys()).get(kid)
    if fernet is None:
        raise CredentialsUnreadable(f"a value is sealed under key {kid}, which the configured keys do not include")
    try:
        return json.loads(fernet.decrypt(token.encode()))
    except InvalidToken:
        raise CredentialsUnreadable(f"a value sealed under key {kid} fails its integrity check") from None


class SealedField(models.TextField):
    """A JSON value (a dict of headers, a secret string, a token) stored encrypted; code reads and writes it plain.

    It cannot be searched by value: each sealing of the same value differs.
    """

    def from_db_value(self, value, expression, connection):
        return None if value is None else unseal(value)

    def to_python(self, value):
        # loaddata hands back what dumpdata wrote: sealed text.
        if isinstance(value, str) and value.startswith(f"{SCHEME}:"):
            return unseal(value)
        return value

    def get_prep_value(self, value):
        return None if value is None else seal(value)

    def value_to_string(self, obj):
        # What dumpdata writes: the sealed text, so a dump holds no credential either.
        return self.get_prep_value(self.value_from_object(obj))

    def formfield(self, **kwargs):
        # Each form that edits a credential parses its own text into the value.
        return None


def sealed_fields():
    """(model, [field names]) of every installed model with a sealed field."""
    for model in apps.get_models():
        names = [field.name for field in model._meta.concrete_fields if isinstance(field, SealedField)]
        if names:
            yield model, names


def check_readable():
    """Decrypt one stored value of each sealed model: a key that cannot read them fails here, not on a later page."""
    for model, names in sealed_fields():
        model._base_manager.only("pk", *names).first()


def reseal_all() -> dict[str, int]:
    """Re-encrypt every sealed value under the first configured key; how many rows of each model were rewritten."""
    rewritten = {}
    with transaction.atomic():
        for model, names in sealed_fields():
            count = 0
            for row in model._base_manager.select_for_update().only("pk", *names):
                model._base_manager.filter(pk=row.pk).update(**{name: getattr(row, name) for name in names})
                count += 1
            rewritten[model._meta.label] = count
    return rewritten
