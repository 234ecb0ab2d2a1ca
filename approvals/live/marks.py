"""What a live page was rendered from, so that its socket can tell it whether it missed anything before listening.

Every change of a call or an input request, and of the catalog, appends to the audit chain in its own transaction
and is announced to the live groups once that commits. A page marks the chain's head before it reads what it shows;
its socket, once it has joined the live groups, reads the head again. What committed between the two was announced
while nobody on that page listened; what commits later reaches the socket. An event the page does not show (a client
listing its tools) costs the page one read of itself. A server's health is not recorded in the chain: a change of it
in that moment shows at the next.
"""

from approvals.audit.models import AuditHead


def now() -> int:
    """The audit chain's head: one read of its single row."""
    return AuditHead.objects.filter(pk=1).values_list("seq", flat=True).first() or 0


def changed_since(mark: int) -> bool:
    return now() != mark
