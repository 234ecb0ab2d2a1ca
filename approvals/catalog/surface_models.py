"""What a server offers besides tools: resources, resource templates and prompts, with their changes."""

from django.contrib.contenttypes.fields import GenericForeignKey, GenericRelation
from django.contrib.contenttypes.models import ContentType
from django.db import models
from django.utils import timezone

from approvals.catalog.models import Change, Server, Tool


class SurfaceChange(Change):
    """The history of a resource, a resource template or a prompt."""

    item_type = models.ForeignKey(ContentType, on_delete=models.CASCADE, related_name="+")
    item_id = models.PositiveBigIntegerField()
    item = GenericForeignKey("item_type", "item_id")

    class Meta(Change.Meta):
        indexes = [models.Index(fields=["item_type", "item_id"], name="surfacechange_item")]


class SurfaceItem(models.Model):
    """What a server offers besides tools, as last listed: a resource, a resource template or a prompt.

    Clients reach a resource by its URI and a prompt by its exposed name, so each
    kind keeps one field (`ROUTED_BY`) that no two active rows may share.
    """

    # Reviewed as tools are, under the server's setting (catalog.trust): the same statuses, the same history.
    Status = Tool.Status
    HELD = Tool.HELD
    # What clients are served: an active entry, and one whose change awaits review, as it was accepted.
    SERVED = models.Q(status="active") | models.Q(status="needs_review", reviewed_definition__isnull=False)

    server = models.ForeignKey(Server, on_delete=models.CASCADE, related_name="%(class)ss")
    upstream_name = models.CharField(max_length=200)
    exposed_name = models.CharField(max_length=300)
    definition = models.JSONField()
    digest = models.CharField(max_length=64)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.ACTIVE)
    reason = models.TextField(blank=True)
    # As a tool's: the definition accepted; while a change awaits review, clients are served this one.
    reviewed_digest = models.CharField(max_length=64, blank=True)
    reviewed_definition = models.JSONField(null=True, blank=True)
    changes = GenericRelation("SurfaceChange", content_type_field="item_type", object_id_field="item_id")
    first_seen_at = models.DateTimeField(default=timezone.now)
    last_changed_at = models.DateTimeField(default=timezone.now)
    last_seen_at = models.DateTimeField(default=timezone.now)

    class Meta:
        abstract = True

    def __str__(self):
        return self.exposed_name

    @property
    def title(self):
        return self.definition.get("title") or ""

    @property
    def description(self):
        return self.definition.get("description") or ""

    @property
    def change_waits(self) -> bool:
        """A definition was accepted, and a change to it awaits review."""
        return self.status == self.Status.NEEDS_REVIEW and self.reviewed_definition is not None

    @property
    def served(self) -> bool:
        return self.status == self.Status.ACTIVE or self.change_waits

    @property
    def served_definition(self) -> dict:
        """What clients are given: the accepted definition while a change to it awaits review."""
        return self.reviewed_definition if self.change_waits else self.definition

    @property
    def served_digest(self) -> str:
        return self.reviewed_digest if self.change_waits else self.digest


# The statuses that hold a route, as a tool's HELD hold its name: an entry awaiting review finds it free when accepted.
HELD_STATUSES = ["active", "needs_review", "declined"]


class UriItem(SurfaceItem):
    """An entry reached by URI: a resource by its own, a template by those it matches (`uri` holds the template)."""

    ROUTED_BY = "uri"
    uri = models.CharField(max_length=2000)

    class Meta:
        abstract = True
        ordering = ["uri"]
        constraints = [
            models.UniqueConstraint(fields=["server", "uri"], name="%(class)s_unique_uri_per_server"),
            models.UniqueConstraint(
                fields=["uri"], condition=models.Q(status__in=HELD_STATUSES), name="%(class)s_unique_held_uri"
            ),
        ]


class Resource(UriItem):
    """One resource of one server; its URI in normal form (its definition keeps the server's) routes resources/read."""


class ResourceTemplate(UriItem):
    """One resource template of one server; a URI it matches, when no resource has it, reads from that server."""


class Prompt(SurfaceItem):
    """One prompt of one server, addressed by clients by its exposed name."""

    ROUTED_BY = "exposed_name"

    class Meta:
        ordering = ["exposed_name"]
        constraints = [
            models.UniqueConstraint(fields=["server", "upstream_name"], name="prompt_unique_upstream_name"),
            models.UniqueConstraint(
                fields=["exposed_name"],
                condition=models.Q(status__in=HELD_STATUSES),
                name="prompt_unique_held_exposed_name",
            ),
        ]

    @property
    def arguments(self) -> list[dict]:
        return [a for a in self.served_definition.get("arguments") or [] if isinstance(a, dict)]
