"""What the fuzz properties exercise and what they report: a live implementation under its
declared options (`Target`), and the input that breaks a property (`Counterexample`), raised
as a `PropertyFailure` for Hypothesis to shrink."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from conformance.model.chunks import Chunk
from conformance.model.judge import squeeze
from conformance.model.options import Options
from conformance.transport.connections import (
    Connection,
    Ok,
    OpRequest,
    Reply,
    StreamRequest,
    WholeRequest,
)
from conformance.transport.connections import Unsupported as UnsupportedReply


@dataclass(frozen=True, slots=True)
class Counterexample:
    chunks: list[dict[str, str | None]]
    reason: str
    expected: Mapping[str, str] | None = None
    actual: Mapping[str, str] | None = None
    #: Set when the implementation failed to answer rather than answered wrongly.
    error: bool = False
    #: For another contract's property: its name and the request payload that failed.
    contract: str | None = None
    payload: Mapping[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"chunks": self.chunks, "reason": self.reason}
        if self.expected is not None:
            data["expected"] = dict(self.expected)
        if self.actual is not None:
            data["actual"] = dict(self.actual)
        if self.contract is not None:
            data["contract"] = self.contract
            data["input"] = dict(self.payload or {})
        return data


class PropertyFailure(AssertionError):
    """A property does not hold. An AssertionError, which Hypothesis shrinks best: it tells
    other exceptions apart by their message, which here changes with every example."""

    def __init__(self, example: Counterexample) -> None:
        super().__init__(example.reason)
        self.example = example


@dataclass(slots=True)
class Target:
    """What the properties exercise: a live implementation under its declared options."""

    connection: Connection
    options: Options
    examples: int = 0
    #: The first input whose only difference was whitespace (SPEC 8.2: NON_STRICT). It does
    #: not stop the search: real failures may still be found.
    non_strict: Counterexample | None = None

    def differs(
        self,
        chunks: list[dict[str, Any]],
        reason: str,
        expected: Mapping[str, str],
        actual: Mapping[str, str],
    ) -> None:
        """Fail unless the channels are equal; note a whitespace-only difference."""
        if dict(actual) == dict(expected):
            return
        if all(squeeze(actual[k]) == squeeze(expected[k]) for k in ("assistant", "thinking")):
            if self.non_strict is None:
                self.non_strict = Counterexample(
                    chunks, f"whitespace only: {reason}", expected, actual
                )
            return
        fail(chunks, reason, expected, actual)

    def stream(self, chunks: list[dict[str, Any]]) -> list[dict[str, str]]:
        request = StreamRequest([Chunk(c.get("content"), c.get("reasoning")) for c in chunks])
        reply = self.connection.send([request])[0]
        return _answer(reply, chunks).deltas or []

    def whole(self, content: str | None, reasoning: str | None) -> dict[str, str]:
        reply = self.connection.send([WholeRequest(content, reasoning)])[0]
        chunks = [{"content": content, "reasoning": reasoning}]
        return _answer(reply, chunks).channels or {}

    def op(self, name: str, method: str, payload: dict[str, Any]) -> dict[str, Any]:
        """Another contract's op; raises Unsupported when the implementation has none."""
        reply = self.connection.send([OpRequest(name, payload, method)])[0]
        if isinstance(reply, UnsupportedReply):
            raise Unsupported(reply.message)
        if not isinstance(reply, Ok):
            raise PropertyFailure(
                Counterexample(
                    [],
                    f"the implementation failed: {reply.reason}",
                    error=True,
                    contract=name,
                    payload=payload,
                )
            )
        return reply.value or {}


class Unsupported(Exception):
    """The implementation does not answer this contract's op: the property is SKIP."""


def _answer(reply: Reply, chunks: list[dict[str, Any]]) -> Ok:
    if not isinstance(reply, Ok):
        raise PropertyFailure(
            Counterexample(chunks, f"the implementation failed: {reply.reason}", error=True)
        )
    return reply


def fail(
    chunks: list[dict[str, Any]],
    reason: str,
    expected: Mapping[str, str] | None = None,
    actual: Mapping[str, str] | None = None,
) -> None:
    raise PropertyFailure(Counterexample(chunks, reason, expected, actual))
