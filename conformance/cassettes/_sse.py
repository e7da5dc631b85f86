"""Server-sent events (the WHATWG event-stream format), with the body line of every event.

CRLF, LF and CR all end a line; `:` lines are comments; `event:`, `data:` (several are
joined with newlines), `id:` and `retry:` are fields; a blank line ends an event. An event
the body ends in the middle of is a truncated body, not an event.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from ._model import DecodeProblem

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True, slots=True)
class SseEvent:
    #: The `event:` field, or "message" when there is none.
    name: str
    data: str
    #: The body line of the event's first `data:` field (1-based).
    line: int
    #: Whether the event had an `event:` field.
    named: bool = False


def split_lines(text: str) -> list[str]:
    """The body's lines; the last item is what follows the last line break."""
    return _LINE_BREAK.split(text) if "\r" in text else text.split("\n")


def parse_sse(text: str) -> Iterator[SseEvent]:
    lines = split_lines(text.removeprefix("\ufeff"))
    # The item after the last line break is "" for a body that ends with one.
    complete, tail = lines[:-1], lines[-1]
    name: str | None = None
    data: list[str] = []
    first_data = 0
    started = 0
    for number, line in enumerate(complete, start=1):
        if not line:
            if data:
                yield SseEvent(name or "message", "\n".join(data), first_data, name is not None)
            name, data, started = None, [], 0
            continue
        if line[0] == ":":
            continue
        started = started or number
        field, colon, value = line.partition(":")
        if colon and value[:1] == " ":
            value = value[1:]
        if field == "data":
            if not data:
                first_data = number
            data.append(value)
        elif field == "event":
            name = value
        # `id` and `retry` do not change what an event says; other fields are ignored.
    if tail or data or started:
        at = len(complete) + 1 if tail else started
        raise DecodeProblem(
            "truncated body: the last event is not ended by a blank line "
            "(the response was cut off, or the recording is incomplete)",
            at,
        )
