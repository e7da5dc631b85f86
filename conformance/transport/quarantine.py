"""Requests that keep timing out are not sent again: each would cost a whole timeout.

An implementation that hangs on one kind of input (say, a chunk that is exactly `<`) would
otherwise cost the timeout, and a restart, on every request that has it: hundreds in a run.
The rule, per operation (stream, whole, each contract op):

- a stream's *pieces* are the distinct contents and native reasoning texts of its chunks; a
  whole message or an op request is one piece;
- a request's *markers* are the delimiters of the implementation's options found in its
  text (in any case, across chunk boundaries): they are what requests of one class share
  when no chunk is the same (an implementation that hangs on every `<think>`);
- a piece or marker found in each of the last `THRESHOLD` requests that timed out, and in no
  request answered since the first of them, is quarantined: later requests that contain it
  get TIMEOUT "not run" at once;
- an operation that timed out `THRESHOLD` times and has never been answered is quarantined
  as a whole (an implementation that hangs on every stream).

Only requests that contain a quarantined piece are affected: the rest are run and judged as
usual. docs/PROTOCOL.md states the rule for implementers.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Hashable, Iterable, Mapping
from typing import Any

from conformance.model.options import Options
from conformance.model.requests import OpRequest, Request, StreamRequest, Timeout, WholeRequest

THRESHOLD = 3


def markers(options: Mapping[str, Any]) -> tuple[str, ...]:
    """The delimiters of an implementation's options, lowercased, as markers."""
    pairs = Options.from_mapping(options).pairs
    return tuple(dict.fromkeys(text.lower() for pair in pairs for text in pair if text))


def pieces(request: Request, marks: Iterable[str] = ()) -> set[Hashable]:
    if isinstance(request, StreamRequest):
        found: set[Hashable] = {("content", c.content) for c in request.chunks}
        found.update(("reasoning", c.reasoning) for c in request.chunks if c.reasoning)
        text = "".join(c.content or "" for c in request.chunks)
    elif isinstance(request, WholeRequest):
        found = {("whole", request.content, request.reasoning)}
        text = request.content or ""
    else:
        assert isinstance(request, OpRequest)
        return {json.dumps(request.payload, sort_keys=True)}
    if text:
        text = text.lower()
        found.update(("containing", mark) for mark in marks if mark in text)
    return found


def _show(piece: Hashable) -> str:
    if isinstance(piece, tuple) and len(piece) == 2:
        kind, value = piece
        text = f"containing {value!r}" if kind == "containing" else f"with {kind} {value!r}"
        return text if len(text) <= 80 else text[:77] + "..."
    return "with this input"


class Quarantine:
    """What one connection has learnt about the requests its implementation hangs on."""

    def __init__(self, marks: Iterable[str] = (), threshold: int = THRESHOLD) -> None:
        self.marks = tuple(marks)
        self.threshold = threshold
        #: Per op: the pieces of its last timed-out requests, less those answered since.
        self._recent: dict[str, deque[set[Hashable]]] = {}
        self._blocked: dict[str, dict[Hashable, str]] = {}
        self._blocked_ops: dict[str, str] = {}
        self._answered_ops: set[str] = set()

    def check(self, request: Request) -> Timeout | None:
        """TIMEOUT "not run" for a request that is quarantined, else None (send it)."""
        if not (self._blocked or self._blocked_ops):
            return None
        op = request.op
        if op in self._blocked_ops:
            return Timeout(self._blocked_ops[op])
        blocked = self._blocked.get(op)
        if blocked:
            for piece in pieces(request, self.marks) & blocked.keys():
                return Timeout(blocked[piece])
        return None

    def answered(self, request: Request) -> None:
        """The implementation answered `request` (whatever it answered)."""
        op = request.op
        self._answered_ops.add(op)
        recent = self._recent.get(op)
        if recent:
            seen = pieces(request, self.marks)
            for timed_out in recent:
                timed_out -= seen

    def timed_out(self, request: Request) -> None:
        op = request.op
        recent = self._recent.setdefault(op, deque(maxlen=self.threshold))
        recent.append(pieces(request, self.marks))
        if len(recent) < self.threshold:
            return
        if op not in self._answered_ops:
            self._blocked_ops[op] = (
                f"not run: the implementation timed out on {self.threshold} {op} requests "
                f"and never answered one, so {op} requests are no longer sent"
            )
            recent.clear()
            return
        common = set.intersection(*recent)
        for piece in common:
            self._blocked.setdefault(op, {})[piece] = (
                f"not run: the implementation timed out on {self.threshold} {op} requests "
                f"{_show(piece)}, so requests like them are no longer sent"
            )
        if common:
            recent.clear()
