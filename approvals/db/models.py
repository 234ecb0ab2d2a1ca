from django.db import models


class LookupStamp(models.Model):
    """One row whose stamp a database trigger changes with every change of the rows db.kept keeps (migration 0007)."""

    stamp = models.CharField(max_length=32)
