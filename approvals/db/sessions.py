"""Browser sessions in the database, each row keyed by the SHA-256 of the cookie's session key.

The cookie's key is a random 32-character secret, so a plain hash is as strong as a slow one here: a dump of the
table names no session anyone could present, while the key a browser sends finds its row. Each row also says whose
session it is, so that a person's sessions end together (`end_sessions_of`) when their access or role changes.
Django's database backend does the rest; this one only changes which key it stores and looks up.
"""

import hashlib

from django.contrib.auth import SESSION_KEY
from django.contrib.sessions.backends.db import SessionStore as DatabaseStore
from django.utils import timezone

from approvals.db.models import BrowserSession


def digest(session_key: str) -> str:
    return hashlib.sha256(session_key.encode()).hexdigest()


def user_id_of(data: dict) -> int | None:
    try:
        return int(data[SESSION_KEY])
    except (KeyError, TypeError, ValueError):
        return None


def end_sessions_of(user_id) -> int:
    """Delete every session of this person; how many there were."""
    return BrowserSession.objects.filter(user_id=user_id).delete()[0]


class SessionStore(DatabaseStore):
    @classmethod
    def get_model_class(cls):
        return BrowserSession

    def stored(self):
        return self.model.objects.filter(session_key=digest(self.session_key), expire_date__gt=timezone.now())

    def _get_session_from_db(self):
        session = self.stored().first()
        if session is None:
            self._session_key = None
        return session

    async def _aget_session_from_db(self):
        session = await self.stored().afirst()
        if session is None:
            self._session_key = None
        return session

    def exists(self, session_key):
        return self.model.objects.filter(session_key=digest(session_key)).exists()

    async def aexists(self, session_key):
        return await self.model.objects.filter(session_key=digest(session_key)).aexists()

    def create_model_instance(self, data):
        return self.model(
            session_key=digest(self._get_or_create_session_key()),
            session_data=self.encode(data),
            expire_date=self.get_expiry_date(),
            user_id=user_id_of(data),
        )

    async def acreate_model_instance(self, data):
        return self.model(
            session_key=digest(await self._aget_or_create_session_key()),
            session_data=self.encode(data),
            expire_date=await self.aget_expiry_date(),
            user_id=user_id_of(data),
        )

    def delete(self, session_key=None):
        session_key = session_key or self.session_key
        if session_key is not None:
            self.model.objects.filter(session_key=digest(session_key)).delete()

    async def adelete(self, session_key=None):
        session_key = session_key or self.session_key
        if session_key is not None:
            await self.model.objects.filter(session_key=digest(session_key)).adelete()
