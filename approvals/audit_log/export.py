"""Exports of the audit log in CSV and JSON Lines, streamed at flat memory.

Rows stream from the database (audit.streaming) and leave in batches of
lines, so an export of millions of events holds one batch at a time. Events are
written oldest first with every hashed field, `data` as the JSON text the database
holds.

Every file ends with the chain head as it was when the export began (the export
holds no event after it): in CSV a last row `# chain head,SEQ,HASH`, in JSON Lines a
last line `{"chain_head": {"seq": SEQ, "hash": HASH}}`. Later,
`manage.py verify_audit --expect-head SEQ:HASH` proves that the chain still holds
that event unchanged, and so, hash by hash, everything before it.
"""

import csv
from contextlib import closing
from json.encoder import encode_basestring

from asgiref.sync import sync_to_async
from django.db.models import TextField
from django.db.models.functions import Cast

from approvals.audit.chain import HASHED
from approvals.audit.models import AuditHead
from approvals.audit.streaming import stream_rows

# The hashed fields in the order the chain hashes them, then the hash itself.
COLUMNS = [*HASHED, "hash"]
AT = COLUMNS.index("at")
# What clients, servers and people named (a token's or user's name, a tool's arguments) is text; the
# other columns, numbers, times and hashes, cannot start a formula.
TEXT_COLUMNS = [COLUMNS.index(name) for name in ("actor_type", "actor_name", "action", "request_id", "data")]
FORMULA_STARTS = frozenset("=+-@\t\r")
HEAD_MARK = "# chain head"
BATCH = 2000
CHUNK = 5000
_JSONL = (
    '{"seq":%d,"at":%s,"actor_type":%s,"actor_id":%s,"actor_name":%s,"action":%s,"request_id":%s,'
    '"call_id":%s,"server_id":%s,"tool_id":%s,"token_id":%s,"data":%s,"prev_hash":%s,"hash":%s}\n'
)


class Line:
    """csv.writer's file: hands back each line instead of storing it."""

    def write(self, line):
        return line


def chain_head():
    head = AuditHead.objects.filter(pk=1).first()
    return (head.seq, head.hash) if head else (0, AuditHead.GENESIS)


def rows(events, head_seq):
    values = [*COLUMNS[:11], "data_text", "prev_hash", "hash"]
    ordered = events.filter(seq__lte=head_seq).annotate(data_text=Cast("data", TextField())).order_by("seq")
    return stream_rows(ordered.values_list(*values), CHUNK)


def as_text(cell: str) -> str:
    """The cell as a spreadsheet must read it: one starting with = + - @, a tab or a carriage return
    would be read as a formula (CSV injection), so it gets a leading apostrophe, as OWASP advises."""
    return "'" + cell if cell[:1] in FORMULA_STARTS else cell


def csv_lines(stream, head):
    # RFC 4180 line ends: a field holding a carriage return is then quoted, never a row break of its own.
    writer = csv.writer(Line(), lineterminator="\r\n")
    yield writer.writerow(COLUMNS)
    for row in stream:
        cells = list(row)
        cells[AT] = cells[AT].isoformat()
        for index in TEXT_COLUMNS:
            cells[index] = as_text(cells[index])
        yield writer.writerow(cells)
    yield writer.writerow([HEAD_MARK, *head])


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


_JSONL_CELLS = tuple(_jsonl_writer(column) for column in COLUMNS)


def jsonl_lines(stream, head):
    quote = encode_basestring
    for row in stream:
        yield _JSONL % tuple(write(cell) for write, cell in zip(_JSONL_CELLS, row, strict=True))
    yield f'{{"chain_head":{{"seq":{head[0]:d},"hash":{quote(head[1])}}}}}\n'


FORMATS = {"csv": (csv_lines, "text/csv"), "jsonl": (jsonl_lines, "application/jsonl")}


def export_chunks(events, fmt):
    """The export as text chunks of up to BATCH lines each."""
    lines = FORMATS[fmt][0]
    head = chain_head()
    with closing(rows(events, head[0])) as stream:
        batch = []
        for line in lines(stream, head):
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
