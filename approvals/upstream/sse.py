"""Server-Sent Events, parsed incrementally as the WHATWG HTML standard defines them.

Bytes arrive in arbitrary chunks (a line, or even a CRLF pair, may be split
across two), so the parser keeps what it has not yet seen the end of, and
refuses to keep more than one event's worth.
"""

import codecs
import re
from dataclasses import dataclass

_EOL = re.compile(r"\r\n|\r|\n")
_DIGITS = re.compile(r"[0-9]+")


class SseError(Exception):
    pass


@dataclass(frozen=True)
class Event:
    data: str
    event: str = "message"
    id: str | None = None  # the stream's last event id as of this event


class SseParser:
    def __init__(self, max_event_chars: int, last_event_id: str | None = None):
        self.max_event_chars = max_event_chars
        self.last_event_id = last_event_id
        self.retry_ms: int | None = None
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._buffer = ""
        self._started = False
        self._skip_lf = False  # the last chunk ended in CR: a LF opening the next one ends no line
        self._data: list[str] = []
        self._data_chars = 0
        self._event_type = ""

    def feed(self, chunk: bytes) -> list[Event]:
        text = self._decoder.decode(chunk)
        if not text:
            return []
        if not self._started:
            self._started = True
            text = text.removeprefix("\ufeff")
        if self._skip_lf and text.startswith("\n"):
            text = text[1:]
        self._skip_lf = False
        self._buffer += text
        events = []
        start = 0
        for match in _EOL.finditer(self._buffer):
            event = self._line(self._buffer[start : match.start()])
            if event is not None:
                events.append(event)
            start = match.end()
            self._skip_lf = match.group() == "\r" and start == len(self._buffer)
        self._buffer = self._buffer[start:]
        if len(self._buffer) + self._data_chars > self.max_event_chars:
            raise SseError(f"an event is larger than {self.max_event_chars} characters")
        return events

    def _line(self, line: str) -> Event | None:
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            return None  # a comment, such as a keep-alive
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
            self._data_chars += len(value) + 1
            if self._data_chars > self.max_event_chars:
                raise SseError(f"an event is larger than {self.max_event_chars} characters")
        elif name == "event":
            self._event_type = value
        elif name == "id":
            if "\0" not in value:
                self.last_event_id = value
        elif name == "retry" and _DIGITS.fullmatch(value):
            self.retry_ms = int(value)
        return None

    def _dispatch(self) -> Event | None:
        data, event_type = self._data, self._event_type or "message"
        self._data, self._data_chars, self._event_type = [], 0, ""
        # An event without data lines is not dispatched; its id is already recorded.
        if not data:
            return None
        return Event("\n".join(data), event_type, self.last_event_id)
