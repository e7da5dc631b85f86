"""Protocol 1's codec, both ends, with no I/O: the reference reading of docs/PROTOCOL.md.

The harness side (`ClientCodec`) turns requests into lines and reply lines into a `Reply`;
the implementation side (`decode_request`, `encode_reply`) does the reverse for
`conformance.server`. Transports (in-process, subprocess, server) only move bytes and time.
The message shapes and the `Reply` variants are in `messages`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from conformance._version import PROTOCOL_VERSION
from conformance.errors import ConformanceError
from conformance.model.clipping import clip_with_digest
from conformance.model.requests import (
    KEEP_MESSAGE,
    Error,
    Ok,
    OpRequest,
    Reply,
    Request,
    StreamRequest,
    Unsupported,
    WholeRequest,
)
from conformance.transport.lines import escape_controls, quote
from conformance.transport.messages import (
    IMPLEMENTATION_KEYS,
    RawStreamRequest,
    stream_reply,
    whole_reply,
)
from conformance.transport.schemas import protocol_violation

# --- the harness side -------------------------------------------------------------------------


class ProtocolError(ConformanceError):
    """The implementation cannot be talked to (a bad hello reply): a start failure, raised
    as ImplementationStartError (exit status 2)."""


@dataclass(frozen=True, slots=True)
class OutOfStep:
    """A line that is not a reply to the request due: nothing later can be trusted."""

    message: str


HELLO = (json.dumps({"op": "hello", "protocol": PROTOCOL_VERSION}) + "\n").encode()
BYE = (json.dumps({"op": "bye"}) + "\n").encode()


def encode_request(request: Request, ident: str) -> bytes:
    """One request line. ASCII-only JSON (non-ASCII as \\u escapes) is valid UTF-8 and cannot
    be split wrongly by a reader that treats U+2028 or U+0085 as line breaks."""
    return (json.dumps(request.to_wire(ident), separators=(",", ":")) + "\n").encode("ascii")


class ClientCodec:
    """The harness's half of a session: `HELLO`, then requests, each answered in order."""

    def __init__(self, validate: bool = False) -> None:
        #: Check every reply against the JSON Schemas (`--validate-protocol`).
        self.validate = validate

    def hello_reply(self, line: bytes) -> dict[str, Any]:
        """The hello reply; ProtocolError says what is wrong with it."""
        try:
            reply = json.loads(line)
        except (ValueError, RecursionError):
            raise ProtocolError(
                f"answered hello with a line that is not JSON: {quote(line)}. The first line "
                "on standard output must be the hello reply; write logs to standard error"
            ) from None
        problem = self._hello_problem(reply)
        if problem:
            raise ProtocolError(f"{problem} (see docs/PROTOCOL.md)")
        return reply

    def _hello_problem(self, reply: Any) -> str | None:
        if not isinstance(reply, dict):
            return f"answered hello with {quote(json.dumps(reply))}, not a JSON object"
        if "error" in reply and "protocol" not in reply:
            return f"refused hello: {_text(reply['error'])}"
        if reply.get("protocol") != PROTOCOL_VERSION:
            return (
                f"speaks protocol {reply.get('protocol')!r}, but this harness speaks protocol "
                f"{PROTOCOL_VERSION}"
            )
        if self.validate:
            violation = protocol_violation(reply, "hello-response")
            if violation:
                return f"protocol violation in the hello reply: {violation}"
        metadata = reply.get("implementation")
        if not isinstance(metadata, dict) or not all(
            isinstance(metadata.get(key), str) for key in IMPLEMENTATION_KEYS
        ):
            return (
                "the hello reply needs `implementation`: an object with string `name`, "
                f"`version` and `language`; got {quote(json.dumps(metadata))}"
            )
        if not isinstance(reply.get("options", {}), dict):
            return f"`options` in the hello reply must be an object, not {reply['options']!r}"
        return None

    def reply(self, line: bytes, request: Request, ident: str) -> Reply | OutOfStep:
        """What a reply line means for the request `ident`."""
        try:
            message = loads_line(line)
        except (ValueError, RecursionError):
            return OutOfStep(
                f"unreadable reply to request {ident}: a line that is not JSON: {quote(line)}"
            )
        if type(message) is not dict:
            return OutOfStep(
                f"unreadable reply to request {ident}: not a JSON object: {quote(line)}"
            )
        if message.get("id") != ident:
            return OutOfStep(
                f"unreadable reply to request {ident}: it has id {message.get('id')!r} where "
                f"{ident!r} was due: {quote(line)}"
            )
        if self.validate:
            violation = protocol_violation(message, _response_schema(message, request))
            if violation:
                return Error(f"protocol violation in reply to request {ident}: {violation}")
        if "error" in message:
            return Error(f"the implementation reported: {_text(message['error'])}")
        if "unsupported" in message:
            return Unsupported(_text(message["unsupported"]))
        if isinstance(request, OpRequest):
            # The contract judges the body; here it only has to be an object.
            return Ok(value={key: value for key, value in message.items() if key != "id"})
        if isinstance(request, StreamRequest):
            if "deltas" not in message:
                return Error(
                    f"the reply to stream request {ident} has none of `deltas`, `error` and "
                    f"`unsupported`: {quote(line)}"
                )
            # Fresh from the parser, used once: its delta objects may be kept as they are.
            return stream_reply(message["deltas"], len(request.chunks), fresh=True)
        return whole_reply(message)


_decode = json.JSONDecoder().decode


def loads_line(line: bytes) -> Any:
    """`json.loads(line)`, the common case (a UTF-8 line) without the detection of other
    encodings: whatever it cannot read goes to `json.loads`, which reads it or says why."""
    try:
        return _decode(line.decode())
    except (ValueError, RecursionError):
        return json.loads(line)


def _text(value: Any) -> str:
    # Clipped before anything else copies it: a message may be hundreds of megabytes.
    text = value if isinstance(value, str) else json.dumps(value)
    return escape_controls(clip_with_digest(text, KEEP_MESSAGE))


def _response_schema(message: dict[str, Any], request: Request) -> str:
    if "error" in message:
        return "error-response"
    if "unsupported" in message:
        return "unsupported-response"
    return f"{request.op}-response"


# --- the implementation side ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Hello:
    protocol: Any


@dataclass(frozen=True, slots=True)
class Bye:
    pass


@dataclass(slots=True)
class Addressed:
    """A request to answer under `ident`, or the reply it gets without being run."""

    ident: Any
    request: Request | RawStreamRequest | Error | Unsupported


_DICT = {dict}


def decode_request(message: Any, methods: Mapping[str, str]) -> Hello | Bye | Addressed:
    """A decoded request line; `methods` maps the contract ops served to their methods."""
    if not isinstance(message, dict):
        return Addressed(None, Error(f"a request must be a JSON object, not {message!r}"))
    op, ident = message.get("op"), message.get("id")
    try:
        if op == "stream":
            # The decoded objects themselves, fresh from the JSON parser and used once: a
            # chunk missing a key makes the normalizer fail, and that is reported.
            chunks = message["chunks"]
            if type(chunks) is not list or set(map(type, chunks)) - _DICT:
                raise TypeError("`chunks` must be a list of objects")
            return Addressed(ident, RawStreamRequest(chunks))
        if op == "whole":
            return Addressed(ident, WholeRequest(message["content"], message["reasoning"]))
    except (KeyError, TypeError) as error:
        return Addressed(ident, Error(f"malformed {op} request: {type(error).__name__}: {error}"))
    if op == "hello":
        return Hello(message.get("protocol"))
    if op == "bye":
        return Bye()
    if isinstance(op, str) and op in methods:
        payload = {k: v for k, v in message.items() if k not in ("op", "id")}
        return Addressed(ident, OpRequest(op, payload, methods[op]))
    return Addressed(ident, Unsupported(f"unknown op {op!r}"))


def encode_reply(ident: Any, reply: Reply) -> dict[str, Any]:
    """The reply message for a request."""
    if isinstance(reply, Ok):
        if reply.deltas is not None:
            return {"id": ident, "deltas": reply.deltas}
        if reply.channels is not None:
            return {"id": ident, **reply.channels}
        return {"id": ident, **(reply.value or {})}
    if isinstance(reply, Unsupported):
        return {"id": ident, "unsupported": reply.message}
    return {"id": ident, "error": reply.message}


def hello_reply(
    implementation: Mapping[str, str],
    options: Mapping[str, Any] | None,
    capabilities: Sequence[str] = (),
) -> dict[str, Any]:
    return {
        "protocol": PROTOCOL_VERSION,
        "implementation": dict(implementation),
        "options": dict(options or {}),
        **({"capabilities": list(capabilities)} if capabilities else {}),
    }


def refuse_hello(protocol: Any) -> dict[str, Any]:
    return {"error": f"this implementation speaks protocol {PROTOCOL_VERSION}, not {protocol!r}"}
