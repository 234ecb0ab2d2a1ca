"""Exports of the audit log in CSV and JSON Lines, streamed at flat memory.

Rows stream from the database (audit.streaming) and leave in batches of
lines, so an export of millions of events holds one batch at a time. Events are
written oldest first with every hashed field, `data` as the JSON text the database
holds, and the event's public chain value (`public_hash`). The CSV also names each
event's server, tool and client beside their ids, as they are named now (names are
not hashed: they help a reader, they prove nothing).

After the events come, in this order (in CSV a row each, starting with `#`):

- `public_chain_before` (`# public chain before,SEQ,VALUE`): the public chain's value
  before the first event exported, which recomputing it starts from;
- `chain_head` (`# chain head,SEQ,HASH`): the last event the export could hold. Later,
  `manage.py verify_audit --expect-head SEQ:HASH` proves that the chain still holds
  that event unchanged, and so, hash by hash, everything before it;
- `checkpoint` (`# checkpoint,SEQ,CHAIN,AT,SIGNED,SIGNATURE,KEY_ID`): the newest signed
  checkpoint the export covers, which tools/verify_export.py checks with the public key.
"""

import csv
import json
from contextlib import closing
from json.encoder import encode_basestring

from asgiref.sync import sync_to_async
from django.db.models import TextField
from django.db.models.functions import Cast

from approvals.audit import checkpoints
from approvals.audit.encoding import HASHED
from approvals.audit.models import AuditEvent, AuditHead
from approvals.audit.streaming import stream_rows
from approvals.catalog.models import Server, Tool
from approvals.tokens.models import ClientToken

# What each event row holds: the hashed fields in the order the chain hashes them, the hash, the public hash.
FIELDS = [*HASHED, "hash", "public_hash"]
AT = FIELDS.index("at")
# The CSV's columns: a name beside each id that has one.
NAMED = {"server_id": "server_name", "tool_id": "tool_name", "token_id": "client_name"}
COLUMNS = [column for field in FIELDS for column in (field, NAMED.get(field)) if column]
# What clients, servers and people named (a token's or user's name, a tool's arguments) is text; the
# other columns, numbers, times and hashes, cannot start a formula.
TEXT_FIELDS = [FIELDS.index(name) for name in ("actor_type", "actor_name", "action", "request_id", "data")]
FORMULA_STARTS = frozenset("=+-@\t\r'")
HEAD_MARK = "# chain head"
BEFORE_MARK = "# public chain before"
CHECKPOINT_MARK = "# checkpoint"
BATCH = 2000
CHUNK = 5000
_JSONL = (
    '{"seq":%d,"at":%s,"actor_type":%s,"actor_id":%s,"actor_name":%s,"action":%s,"request_id":%s,'
    '"call_id":%s,"server_id":%s,"tool_id":%s,"token_id":%s,"data":%s,"prev_hash":%s,"hash":%s,"public_hash":%s}\n'
)


class Line:
    """csv.writer's file: hands back each line instead of storing it."""

    def write(self, line):
        return line


def chain_head(through=None):
    """The (seq, hash) of the last event an export may hold: the head, or the event at `through`."""
    head = AuditHead.objects.filter(pk=1).first()
    if head is None:
        return (0, AuditHead.GENESIS)
    if through is None or through >= head.seq:
        return (head.seq, head.hash)
    found = AuditEvent.objects.filter(seq=through).values_list("hash", flat=True).first()
    return (through, found or AuditHead.GENESIS)


def public_before(seq: int) -> str:
    """The public chain's value before the event at `seq`: its predecessor's, or the anchor's."""
    found = AuditEvent.objects.filter(seq=seq - 1).values_list("public_hash", flat=True).first()
    if found is not None:
        return found
    head = AuditHead.objects.filter(pk=1).first()
    return head.anchor_public_hash if head is not None else AuditHead.GENESIS


def rows(events, head_seq):
    values = [*FIELDS[:11], "data_text", "prev_hash", "hash", "public_hash"]
    ordered = events.filter(seq__lte=head_seq).annotate(data_text=Cast("data", TextField())).order_by("seq")
    return stream_rows(ordered.values_list(*values), CHUNK)


def as_text(cell: str) -> str:
    """The cell as a spreadsheet must read it: one starting with = + - @, a tab or a carriage return
    would be read as a formula (CSV injection), so it gets a leading apostrophe, as OWASP advises. One
    starting with an apostrophe gets another, so that a verifier takes exactly one off any cell."""
    return "'" + cell if cell[:1] in FORMULA_STARTS else cell


class Ending:
    """What an export learns as its rows pass, for the lines that end it."""

    def __init__(self, head):
        self.head, self.first, self.last = head, None, None

    def seen(self, seq):
        if self.first is None:
            self.first = seq
        self.last = seq

    def before(self):
        return None if self.first is None else (self.first - 1, public_before(self.first))

    def checkpoint(self):
        if self.first is None:
            return None
        found = checkpoints.newest_through(self.last)
        return found if found is not None and found.seq >= self.first else None


class Names:
    """The current names of every server, tool and client, read before the rows stream: on PostgreSQL the
    stream holds the connection until its last row."""

    MODELS = {"server_id": (Server, "name"), "tool_id": (Tool, "exposed_name"), "token_id": (ClientToken, "name")}

    def __init__(self):
        models = self.MODELS.items()
        self.known = {field: dict(model.objects.values_list("pk", name)) for field, (model, name) in models}

    def of(self, field, pk):
        return "" if pk is None else self.known[field].get(pk, "")


def csv_lines(stream, ending):
    # RFC 4180 line ends: a field holding a carriage return is then quoted, never a row break of its own.
    writer = csv.writer(Line(), lineterminator="\r\n")
    yield writer.writerow(COLUMNS)
    names = Names()
    for row in stream:
        ending.seen(row[0])
        cells = list(row)
        cells[AT] = cells[AT].isoformat()
        for index in TEXT_FIELDS:
            cells[index] = as_text(cells[index])
        out = []
        for field, cell in zip(FIELDS, cells, strict=True):
            out.append(cell)
            if field in NAMED:
                out.append(as_text(names.of(field, cell)))
        yield writer.writerow(out)
    if before := ending.before():
        yield writer.writerow([BEFORE_MARK, *before])
    yield writer.writerow([HEAD_MARK, *ending.head])
    if checkpoint := ending.checkpoint():
        shown = checkpoints.as_dict(checkpoint)
        yield writer.writerow([CHECKPOINT_MARK, *(shown[name] for name in CHECKPOINT_FIELDS)])


CHECKPOINT_FIELDS = ("seq", "chain", "at", "signed", "signature", "key_id")


def _id(value):
    return "null" if value is None else f"{value:d}"


def _time(at):
    return encode_basestring(at.isoformat())


def _json_text(text):
    return text


def _jsonl_writer(column):
    """How a column's value is written into _JSONL: row ids are integers or null, `data` is already JSON text."""
    special = {"seq": int, "at": _time, "data": _json_text}
    row_ids = {"actor_id", "call_id", "server_id", "tool_id", "token_id"}
    return special.get(column, _id if column in row_ids else encode_basestring)


_JSONL_CELLS = tuple(_jsonl_writer(column) for column in FIELDS)


def jsonl_lines(stream, ending):
    quote = encode_basestring
    for row in stream:
        ending.seen(row[0])
        yield _JSONL % tuple(write(cell) for write, cell in zip(_JSONL_CELLS, row, strict=True))
    if before := ending.before():
        yield json.dumps({"public_chain_before": {"seq": before[0], "value": before[1]}}, separators=(",", ":")) + "\n"
    head = ending.head
    yield f'{{"chain_head":{{"seq":{head[0]:d},"hash":{quote(head[1])}}}}}\n'
    if checkpoint := ending.checkpoint():
        yield json.dumps({"checkpoint": checkpoints.as_dict(checkpoint)}, separators=(",", ":")) + "\n"


FORMATS = {"csv": (csv_lines, "text/csv"), "jsonl": (jsonl_lines, "application/jsonl")}


def export_chunks(events, fmt, through=None):
    """The export as text chunks of up to BATCH lines each; the events up to the head, or to seq `through`."""
    lines = FORMATS[fmt][0]
    ending = Ending(chain_head(through))
    with closing(rows(events, ending.head[0])) as stream:
        batch = []
        for line in lines(stream, ending):
            batch.append(line)
            if len(batch) >= BATCH:
                yield "".join(batch)
                batch = []
        if batch:
            yield "".join(batch)


async def async_chunks(chunks):
    """A synchronous generator served from an ASGI server one chunk at a time.

    Django's ASGI handler would gather a synchronous iterator into a list before sending
    a byte. Each step runs in the request's own thread, where the generator's database
    connection and its stream live.
    """
    step = sync_to_async(next, thread_sensitive=True)
    try:
        while True:
            chunk = await step(chunks, None)
            if chunk is None:
                return
            yield chunk
    finally:
        await sync_to_async(chunks.close, thread_sensitive=True)()
