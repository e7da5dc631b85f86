"""What the fuzz properties exercise: a live implementation under its declared options, over
a connection (`Target`, the `FuzzTarget` of conformance/contracts/_fuzzing.py, where the
`Counterexample` a failing property raises is defined too)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from conformance.contracts._fuzzing import Counterexample, PropertyFailure, Unsupported, fail
from conformance.engine.declines import Declines
from conformance.model.chunks import Chunk
from conformance.model.judge import squeeze
from conformance.model.options import Options
from conformance.model.requests import Ok, OpRequest, Reply, Request, StreamRequest, WholeRequest
from conformance.model.requests import Unsupported as UnsupportedReply
from conformance.transport.connections import Connection


@dataclass(slots=True)
class Target:
    """What the properties exercise: a live implementation under its declared options."""

    connection: Connection
    options: Options
    examples: int = 0
    #: The first input whose only difference was whitespace (SPEC 8.2: NON_STRICT). It does
    #: not stop the search: real failures may still be found.
    non_strict: Counterexample | None = None
    #: `unsupported` holds for an operation as a whole (engine/declines.py): a property
    #: needing an operation the implementation lacks is SKIP; declining some inputs of one
    #: it answers is an ERROR.
    declines: Declines = field(default_factory=Declines)

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
        return _answer(self._send(request), chunks).deltas or []

    def whole(self, content: str | None, reasoning: str | None) -> dict[str, str]:
        reply = self._send(WholeRequest(content, reasoning))
        chunks = [{"content": content, "reasoning": reasoning}]
        return _answer(reply, chunks).channels or {}

    def op(self, name: str, method: str, payload: dict[str, Any]) -> dict[str, Any]:
        """Another contract's op; raises Unsupported when the implementation has none."""
        reply = self._send(OpRequest(name, payload, method))
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

    def _send(self, request: Request) -> Reply:
        """The reply to one request; Unsupported when the implementation lacks its op."""
        reply = self.declines.settle(request.op, self.connection.send([request])[0])
        if isinstance(reply, UnsupportedReply):
            raise Unsupported(reply.message)
        return reply


def _answer(reply: Reply, chunks: list[dict[str, Any]]) -> Ok:
    if not isinstance(reply, Ok):
        raise PropertyFailure(
            Counterexample(chunks, f"the implementation failed: {reply.reason}", error=True)
        )
    return reply
