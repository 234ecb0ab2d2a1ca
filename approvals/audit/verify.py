"""Verifying the chain: every event's hash recomputed, every link followed, from the anchor to the head.

The walk reads the head first and then only the events up to it: the head moves
in the same transaction as each append, so every event up to the head it read is
there to be read, and appends made meanwhile are left for the next run. A walk that
passes leaves its head with the witness (approvals.audit.witness), and every walk
requires the witnessed head to be still in the chain: a head set back to an earlier
event verifies link by link, and only that comparison shows the events cut off.
"""

from contextlib import closing, nullcontext
from dataclasses import dataclass
from json import JSONDecoder
from json.scanner import c_make_scanner

from django.db import connection, transaction
from django.db.models import TextField
from django.db.models.functions import Cast

from approvals.audit import chain, witness
from approvals.audit.chain import Actor
from approvals.audit.encoding import HASHED, encode_event, keyed_hash
from approvals.audit.models import AuditEvent, AuditHead
from approvals.audit.public_chain import public_chain_value
from approvals.audit.streaming import stream_rows

CHUNK = 5000
PRUNED = "audit.pruned"


@dataclass
class Verdict:
    ok: bool
    checked: int = 0
    first_seq: int | None = None
    last_seq: int | None = None
    broken_seq: int | None = None
    expected: str = ""
    found: str = ""
    problem: str = ""

    @property
    def unverified(self) -> bool:
        """Neither intact nor broken: the links hold as far as they were checked, but the witness could not be read."""
        return not self.ok and self.broken_seq is None

    def summary(self) -> str:
        if self.unverified:
            return f"Not verified: {self.problem}."
        if self.ok:
            if not self.checked:
                return "The chain is intact: no events to check."
            return f"The chain is intact: {self.checked} events, seq {self.first_seq} to {self.last_seq}."
        return f"Broken at seq {self.broken_seq}: {self.problem} (expected {self.expected}, found {self.found})."


class Broken(Exception):
    def __init__(self, seq, problem, expected, found):
        super().__init__(problem)
        self.seq, self.problem, self.expected, self.found = seq, problem, str(expected), str(found)


def verify_chain(expect: tuple[int, str] | None = None, chunk_size=CHUNK) -> Verdict:
    """Walk the chain; `expect` is a (seq, hash) head from an earlier export that must still be in it."""
    verdict, anchor_seq = walk_once(expect, chunk_size)
    if not verdict.ok and AuditHead.objects.filter(pk=1).exclude(anchor_seq=anchor_seq).exists():
        # A prune committed between reading the head and reading the events: walk again from the new anchor.
        verdict, _ = walk_once(expect, chunk_size)
    return verdict


def walk_once(expect, chunk_size) -> tuple[Verdict, int]:
    # On PostgreSQL one repeatable-read transaction shows the head and the events as of
    # one moment. SQLite takes its write lock when a transaction begins, so it reads
    # without one; a prune that lands meanwhile is met by walking again.
    postgres, outermost = connection.vendor == "postgresql", not connection.in_atomic_block
    with transaction.atomic() if postgres else nullcontext():
        if postgres and outermost:
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        head = AuditHead.objects.filter(pk=1).first()
        if head is None:
            if AuditEvent.objects.exists():
                return Verdict(
                    False, broken_seq=0, expected="a chain head", found="none", problem="the chain head is missing"
                ), 0
            return Verdict(True), 0
        walk = Walk(head, expect)
        unreachable = None
        try:
            witnessed = witness.read()
        except witness.Unreachable as exc:
            # The links are still worth walking: a break they show is news whatever the witness says.
            witnessed, unreachable = None, exc
        except witness.Forged:
            return Verdict(
                False,
                broken_seq=head.seq,
                expected="a witness signed with AUDIT_KEY",
                found="another signature",
                problem="the witness of the last verified head was not written with this AUDIT_KEY",
            ), head.anchor_seq
        # Closed before the transaction ends, even when the walk stops half-way: a stream
        # left open would hold the connection.
        with closing(stream_rows(events_through(head.seq), chunk_size)) as rows:
            try:
                walk.check_expected()
                walk.follow(rows)
                walk.finish()
                walk.check_witness(witnessed)
            except Broken as broken:
                verdict = Verdict(
                    False,
                    walk.checked,
                    walk.first_seq,
                    walk.last_seq,
                    broken.seq,
                    broken.expected,
                    broken.found,
                    broken.problem,
                )
                return verdict, head.anchor_seq
        if unreachable is None:
            try:
                witness.raise_to(head.seq, head.hash)
            except witness.Unreachable as exc:
                unreachable = exc
    if unreachable is not None:
        return not_verified(walk, unreachable), head.anchor_seq
    return Verdict(True, walk.checked, walk.first_seq, walk.last_seq), head.anchor_seq


def not_verified(walk, unreachable) -> Verdict:
    problem = (
        f"{unreachable}; the links hold from seq {walk.first_seq} to {walk.last_seq}, but whether newest events "
        "were cut off cannot be told without the witness"
        if walk.checked
        else f"{unreachable}; whether events were cut off cannot be told without the witness"
    )
    return Verdict(False, walk.checked, walk.first_seq, walk.last_seq, problem=problem)


def reset_witness(actor: Actor) -> chain.Event:
    """Make the current head the witnessed one, whatever the witness held: after restoring the database from a backup.

    Audited first, in an `audit.witness_reset` event naming what was witnessed before; the witness then holds
    that very event. Unreachable when the witness store does not answer (nothing is recorded then).
    """
    try:
        before = witness.read()
    except witness.Forged:
        before = "a witness not signed with this AUDIT_KEY"
    with transaction.atomic():
        witnessed = {"seq": before[0], "hash": before[1]} if isinstance(before, tuple) else before
        event = chain.record("audit.witness_reset", actor, data={"witnessed_before": witnessed})
    witness.replace(event.seq, event.hash)
    return event


def events_through(seq):
    """The HASHED fields, the hash and the public hash of each event up to `seq`, in seq order; `data` as text."""
    ordered = AuditEvent.objects.filter(seq__lte=seq).order_by("seq").annotate(data_text=Cast("data", TextField()))
    return ordered.values_list(*HASHED[:11], "data_text", "prev_hash", "hash", "public_hash")


class Walk:
    def __init__(self, head, expect):
        self.head, self.expect = head, expect
        self.next_seq, self.prev_hash = head.anchor_seq + 1, head.anchor_hash
        self.prev_public = head.anchor_public_hash
        self.checked, self.first_seq, self.last_seq = 0, None, None
        self.pruned = None  # the data of the latest audit.pruned event

    def check_expected(self):
        """An exported head that lies outside the events the walk will read."""
        if self.expect is None:
            return
        seq, hash_ = self.expect
        head = self.head
        if seq > head.seq:
            raise Broken(seq, "the chain is shorter than the exported head", f"seq {seq}", f"head at seq {head.seq}")
        if seq < head.anchor_seq:
            raise Broken(
                seq,
                "the exported head was pruned and can no longer be checked",
                f"seq {seq}",
                f"anchor at seq {head.anchor_seq}",
            )
        if seq == head.anchor_seq and hash_ != head.anchor_hash:
            raise Broken(seq, "the anchor differs from the exported head", hash_, head.anchor_hash)

    def follow(self, rows):
        """Check rows from events_through; the hot loop of verification, kept lean."""
        expect_seq = self.expect[0] if self.expect else None
        next_seq, prev_hash, prev_public, checked = self.next_seq, self.prev_hash, self.prev_public, 0
        # json's C scanner itself: half the cost of json.loads, whose checks text from
        # the database never needs.
        scan = c_make_scanner(JSONDecoder())
        try:
            for row in rows:
                seq, stored = row[0], row[13]
                if seq != next_seq:
                    raise Broken(next_seq, "events are missing", f"seq {next_seq}", f"seq {seq}")
                if row[12] != prev_hash:
                    raise Broken(seq, "the link to the event before is broken", prev_hash, row[12])
                data = scan(row[11], 0)[0]
                encoded = encode_event((*row[:11], data, prev_hash))
                computed = keyed_hash(encoded)
                if computed != stored:
                    # Every event fails alike under another key, so the first one checked names that cause too.
                    problem = "the event was changed after it was written"
                    if not checked:
                        problem += ", or AUDIT_KEY is not the key it was written with"
                    raise Broken(seq, problem, computed, stored)
                public = public_chain_value(prev_public, encoded)
                if public != row[14]:
                    raise Broken(seq, "the event's public chain value was changed", public, row[14])
                if row[5] == PRUNED:
                    self.pruned = data
                if seq == expect_seq and stored != self.expect[1]:
                    raise Broken(seq, "the event differs from the exported head", self.expect[1], stored)
                if not checked:
                    self.first_seq = seq
                next_seq, prev_hash, prev_public, checked = seq + 1, stored, public, checked + 1
        finally:
            self.next_seq, self.prev_hash, self.prev_public, self.checked = next_seq, prev_hash, prev_public, checked
            self.last_seq = next_seq - 1 if checked else None

    def finish(self):
        head = self.head
        if self.next_seq - 1 != head.seq:
            raise Broken(
                self.next_seq, "events are missing at the end", f"seq {head.seq} (the head)", f"seq {self.next_seq - 1}"
            )
        if self.prev_hash != head.hash:
            raise Broken(head.seq, "the head does not match the last event", head.hash, self.prev_hash)
        if self.prev_public != head.public_hash:
            raise Broken(
                head.seq,
                "the head's public chain value does not match the last event",
                head.public_hash,
                self.prev_public,
            )
        anchor = f"{head.anchor_seq}:{head.anchor_hash}"
        if head.anchor_seq and self.attested() != anchor:
            raise Broken(head.anchor_seq, "no audit.pruned event records the anchor", anchor, self.attested())

    def check_witness(self, witnessed):
        """The head a verification found intact before must still be in the chain, unless pruned since."""
        if witnessed is None:
            return
        seq, hash_ = witnessed
        head = self.head
        if seq > head.seq:
            raise Broken(
                head.seq + 1,
                "events an earlier verification saw are gone from the end, and the head was set back",
                f"seq {seq} (verified before)",
                f"head at seq {head.seq}",
            )
        if seq < head.anchor_seq:
            return
        if seq == head.anchor_seq:
            found = head.anchor_hash
        else:
            found = AuditEvent.objects.filter(seq=seq).values_list("hash", flat=True).first()
        if found != hash_:
            raise Broken(seq, "the event an earlier verification saw was replaced", hash_, found)

    def attested(self):
        if not isinstance(self.pruned, dict):
            return "none"
        return f"{self.pruned.get('through_seq')}:{self.pruned.get('through_hash')}"
