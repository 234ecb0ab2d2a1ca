from django.contrib.sessions.base_session import AbstractBaseSession
from django.db import models


class LookupStamp(models.Model):
    """One row whose stamp a database trigger changes with every change of the rows db.kept keeps (migration 0007)."""

    stamp = models.CharField(max_length=32)


class BrowserSession(AbstractBaseSession):
    """A signed-in browser's session (db.sessions), kept under the SHA-256 of its cookie's key, and the person it
    names, so that every session of one person can be ended at once."""

    session_key = models.CharField(max_length=64, primary_key=True)
    user_id = models.IntegerField(null=True, blank=True, db_index=True)
