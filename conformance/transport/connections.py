"""Connections to implementations: how requests reach a normalizer and replies come back.

Every connection answers a batch of requests with one `Reply` each, in order. Whatever an
implementation does wrong (raises, hangs, crashes, answers garbage) becomes a `Reply` with
`error` or `timeout` set: misbehaviour is data, never an exception out of the runner.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from conformance.model.chunks import Chunk
from conformance.model.results import ImplementationInfo

CHANNELS = ("assistant", "thinking")


@dataclass(frozen=True, slots=True)
class StreamRequest:
    chunks: Sequence[Chunk]

    def to_wire(self, ident: str) -> dict[str, Any]:
        return {"op": "stream", "id": ident, "chunks": [c.to_json() for c in self.chunks]}


@dataclass(frozen=True, slots=True)
class WholeRequest:
    content: str | None
    reasoning: str | None

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


@dataclass(frozen=True, slots=True)
class Reply:
    """The outcome of one request: exactly one of the first five fields is set."""

    deltas: list[dict[str, str]] | None = None
    channels: dict[str, str] | None = None
    #: The reply body of an `OpRequest` (the reply without `id`), for its contract to judge.
    value: dict[str, Any] | None = None
    error: str | None = None
    unsupported: str | None = None
    timeout: bool = False
    #: The tail of the implementation's stderr, kept with failures.
    stderr: str | None = None


class Connection(Protocol):
    """A live implementation."""

    info: ImplementationInfo

    def send(self, requests: Sequence[Request]) -> list[Reply]:
        """Answer each request, in order (a connection may pipeline them)."""
        ...

    def close(self) -> None: ...


def check_delta(value: Any, where: str) -> dict[str, str] | str:
    """The delta, or what is wrong with it."""
    if not isinstance(value, Mapping):
        return f"{where} must be an object with `assistant` and `thinking`, not {value!r}"
    for key in CHANNELS:
        if key not in value:
            return f"{where} has no {key!r} key: {dict(value)!r}"
        if not isinstance(value[key], str):
            return f"{where}[{key!r}] must be a string, not {value[key]!r}"
    return {"assistant": value["assistant"], "thinking": value["thinking"]}


def stream_reply(deltas: Any, chunk_count: int) -> Reply:
    """Validate the deltas answering a stream of `chunk_count` chunks."""
    if not isinstance(deltas, list):
        return Reply(error=f"`deltas` must be a list, not {deltas!r}")
    if len(deltas) != chunk_count + 1:
        return Reply(
            error=f"expected {chunk_count + 1} deltas ({chunk_count} chunks + the "
            f"final flush), got {len(deltas)}"
        )
    checked = []
    for index, delta in enumerate(deltas):
        result = check_delta(delta, f"deltas[{index}]")
        if isinstance(result, str):
            return Reply(error=result)
        checked.append(result)
    return Reply(deltas=checked)


def whole_reply(value: Any) -> Reply:
    result = check_delta(value, "the whole reply")
    return Reply(error=result) if isinstance(result, str) else Reply(channels=result)


class InProcessConnection:
    """A Python normalizer in this process (`python:` and the bundled reference)."""

    def __init__(self, factory: Callable[[], Any], info: ImplementationInfo) -> None:
        self.factory = factory
        self.info = info

    def send(self, requests: Sequence[Request]) -> list[Reply]:
        return [self._one(request) for request in requests]

    def _one(self, request: Request) -> Reply:
        try:
            normalizer = self.factory()
            if isinstance(request, OpRequest):
                method = getattr(normalizer, request.method, None)
                if method is None:
                    return Reply(unsupported=f"no {request.method}() method")
                before = json.dumps(request.payload, sort_keys=True)
                value = method(**request.payload)
                if json.dumps(request.payload, sort_keys=True) != before:
                    # An op works on its input; changing it (a stored history, say) is a bug.
                    return Reply(error=f"{request.method}() changed its input in place")
                if not isinstance(value, Mapping):
                    return Reply(error=f"{request.method}() must return an object, not {value!r}")
                return Reply(value=dict(value))
            if isinstance(request, WholeRequest):
                whole = getattr(normalizer, "whole", None)
                if whole is not None:
                    return whole_reply(whole(request.content, request.reasoning))
                chunk = {"content": request.content, "reasoning": request.reasoning}
                reply = stream_reply([normalizer.feed(chunk), normalizer.finish()], 1)
                if reply.deltas is None:
                    return reply
                first, last = reply.deltas
                return Reply(channels={k: first[k] + last[k] for k in CHANNELS})
            deltas = [normalizer.feed(chunk.to_json()) for chunk in request.chunks]
            deltas.append(normalizer.finish())
            return stream_reply(deltas, len(request.chunks))
        except Exception as error:  # the implementation's failure is a result, not ours
            return Reply(error=f"raised {type(error).__name__}: {error}")

    def close(self) -> None:
        pass
