"""Requests to an implementation and its replies, as plain data.

A contract plans requests (`StreamRequest`, `WholeRequest`, `OpRequest`) and judges the
`Reply` each one gets; a connection (conformance.transport) carries them. Anything but `Ok`
failed, and says how with `verdict` and `reason`: the one place that decides what a failed
reply means for a check.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from conformance.model.chunks import Chunk
from conformance.model.clipping import clip_with_digest
from conformance.model.results import Verdict

# --- requests ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StreamRequest:
    chunks: Sequence[Chunk]
    op: ClassVar[str] = "stream"

    def to_wire(self, ident: str) -> dict[str, Any]:
        return {"op": "stream", "id": ident, "chunks": [c.to_json() for c in self.chunks]}


@dataclass(frozen=True, slots=True)
class WholeRequest:
    content: str | None
    reasoning: str | None
    op: ClassVar[str] = "whole"

    def to_wire(self, ident: str) -> dict[str, Any]:
        return {"op": "whole", "id": ident, "content": self.content, "reasoning": self.reasoning}


@dataclass(frozen=True, slots=True)
class OpRequest:
    """A request of another contract (docs/contracts.md): an op and its payload."""

    op: str
    payload: Mapping[str, Any]
    #: The method a `python:` implementation answers it with.
    method: str

    def to_wire(self, ident: str) -> dict[str, Any]:
        return {"op": self.op, "id": ident, **self.payload}


Request = StreamRequest | WholeRequest | OpRequest


# --- replies: what came back, and whether it failed -------------------------------------------

#: Characters kept from the start and from the end of a failure's message: an
#: implementation's message may be any size, and every failed reply is kept until judged.
KEEP_MESSAGE = 1000

# Not frozen, though never changed: a frozen dataclass sets each field through
# object.__setattr__, and one reply is made per request on both ends of the protocol.


@dataclass(slots=True)
class Ok:
    """An answer to judge: `deltas` for a stream, `channels` for a whole message, `value`
    (the reply without `id`) for a contract op."""

    deltas: list[dict[str, str]] | None = None
    channels: dict[str, str] | None = None
    value: dict[str, Any] | None = None
    stderr: str | None = None


@dataclass(slots=True)
class Error:
    """The request failed: the implementation said so, crashed, or answered malformed."""

    message: str
    #: The tail of the implementation's stderr, kept with failures.
    stderr: str | None = None
    verdict: ClassVar[Verdict] = Verdict.ERROR

    def __post_init__(self) -> None:
        self.message = clip_with_digest(self.message, KEEP_MESSAGE)

    @property
    def reason(self) -> str:
        return self.message

    @property
    def problem(self) -> str:
        return f"error: {self.message}"


@dataclass(slots=True)
class Unsupported:
    """The implementation does not have this operation: the check is skipped."""

    message: str
    stderr: str | None = None
    verdict: ClassVar[Verdict] = Verdict.SKIP

    def __post_init__(self) -> None:
        self.message = clip_with_digest(self.message, KEEP_MESSAGE)

    @property
    def reason(self) -> str:
        return f"unsupported: {self.message}"

    problem = reason


@dataclass(slots=True)
class Timeout:
    """No reply in time, or not sent at all because requests like it kept timing out."""

    message: str = "no reply within the timeout"
    stderr: str | None = None
    verdict: ClassVar[Verdict] = Verdict.TIMEOUT

    @property
    def reason(self) -> str:
        return self.message

    problem = reason


#: The outcome of one request. Anything but `Ok` failed, and says how with `verdict` (ERROR,
#: SKIP or TIMEOUT) and `reason`: the one place that decides what a failed reply means.
Reply = Ok | Error | Unsupported | Timeout
Failed = Error | Unsupported | Timeout
