"""Protocol 1 as data: every message shape once, and the checks of replies' bodies.

`SHAPES` lists the top-level keys of every message; tests/test_protocol_codec.py checks it
against the JSON Schemas in conformance/schemas/protocol/. `codec` reads and writes these
messages; the requests and the `Reply` sum type are plain data in
conformance/model/requests.py.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from conformance.model.chunks import CHANNELS
from conformance.model.requests import Error, Ok


@dataclass(frozen=True, slots=True)
class Shape:
    """The top-level keys of one message."""

    required: tuple[str, ...]
    optional: tuple[str, ...] = ()


#: Every message of protocol 1 by its schema name. Contract ops (`render`, `egress`) carry
#: their contract's payload keys next to `op` and `id`; their shapes live with the contract.
SHAPES: dict[str, Shape] = {
    "hello-request": Shape(("op", "protocol")),
    "hello-response": Shape(("protocol", "implementation"), ("options", "capabilities")),
    "stream-request": Shape(("op", "id", "chunks")),
    "stream-response": Shape(("id", "deltas")),
    "whole-request": Shape(("op", "id", "content", "reasoning")),
    "whole-response": Shape(("id", *CHANNELS)),
    "error-response": Shape(("error",), ("id",)),
    "unsupported-response": Shape(("id", "unsupported")),
    "bye-request": Shape(("op",)),
}
IMPLEMENTATION_KEYS = ("name", "version", "language")


# --- the implementation side's stream request ----------------------------------------------


@dataclass(slots=True)
class RawStreamRequest:
    """A stream request as the implementation side decodes it: chunks as the plain dicts a
    normalizer is fed (building `Chunk`s only to turn them back into dicts costs a fifth of
    a served request)."""

    chunks: list[dict[str, str | None]]
    op: ClassVar[str] = "stream"

    def to_wire(self, ident: str) -> dict[str, Any]:
        return {"op": "stream", "id": ident, "chunks": self.chunks}


def plain_str(value: str) -> str:
    """An exact `str`: a subclass from an implementation may override anything a judge uses."""
    return value if type(value) is str else str.__str__(value)


def check_delta(value: Any, where: str) -> dict[str, str] | str:
    """The delta as a plain dict of plain strings, or what is wrong with it."""
    if not isinstance(value, Mapping):
        return f"{where} must be an object with `assistant` and `thinking`, not {value!r}"
    for key in CHANNELS:
        if key not in value:
            return f"{where} has no {key!r} key: {dict(value)!r}"
        if not isinstance(value[key], str):
            return f"{where}[{key!r}] must be a string, not {value[key]!r}"
    return {"assistant": plain_str(value["assistant"]), "thinking": plain_str(value["thinking"])}


def stream_reply(deltas: Any, chunk_count: int, *, fresh: bool = False) -> Ok | Error:
    """Validate the deltas answering a stream of `chunk_count` chunks. `fresh`: the list and
    its deltas were just made for this reply and nothing else holds them (decoded JSON), so
    when every delta is already exactly `{"assistant": str, "thinking": str}` they are kept
    rather than copied."""
    if not isinstance(deltas, list):
        return Error(f"`deltas` must be a list, not {deltas!r}")
    if len(deltas) != chunk_count + 1:
        return Error(
            f"expected {chunk_count + 1} deltas ({chunk_count} chunks + the "
            f"final flush), got {len(deltas)}"
        )
    if fresh:
        for delta in deltas:
            if not (
                type(delta) is dict
                and len(delta) == 2
                and type(delta.get("assistant")) is str
                and type(delta.get("thinking")) is str
            ):
                break
        else:  # every delta is exactly {"assistant": str, "thinking": str}: kept as it is
            return Ok(deltas=deltas)
    checked: list[dict[str, str]] = []
    append = checked.append
    for delta in deltas:
        # The common case first, without building a message nobody reads: this runs for
        # every delta of every stream, on both ends of the protocol.
        if type(delta) is dict:
            assistant, thinking = delta.get("assistant"), delta.get("thinking")
            if type(assistant) is str and type(thinking) is str:
                append({"assistant": assistant, "thinking": thinking})
                continue
        result = check_delta(delta, f"deltas[{len(checked)}]")
        if isinstance(result, str):
            return Error(result)
        append(result)
    return Ok(deltas=checked)


def whole_reply(value: Any) -> Ok | Error:
    result = check_delta(value, "the whole reply")
    return Error(result) if isinstance(result, str) else Ok(channels=result)


def op_reply(value: Any, method: str) -> Ok | Error:
    """A contract op's reply body, as plain JSON data (what the wire would carry)."""
    if not isinstance(value, Mapping):
        return Error(f"{method}() must return an object, not {value!r}")
    try:
        return Ok(value=json.loads(json.dumps(dict(value))))
    except (TypeError, ValueError) as error:
        return Error(f"{method}() returned what JSON cannot carry: {error}")
