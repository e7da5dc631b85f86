"""Serve a Python normalizer over the implementation protocol (docs/PROTOCOL.md), so that
`conformance run --impl cmd:...` can drive it like a program in any other language.

    from conformance.transport.server import serve
    serve(MyNormalizer, implementation={"name": "mine", "version": "1.0", "language": "python"})

Requests are read in whatever batches the pipe delivers and answered in one write per batch,
which keeps a pipelining harness fast.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Mapping
from typing import Any, BinaryIO

from conformance._version import PROTOCOL_VERSION
from conformance.interface import StreamNormalizer

WholeFunction = Callable[[str | None, str | None], Mapping[str, str]]


class Handler:
    """Answers protocol requests (decoded JSON objects) with response objects."""

    def __init__(
        self,
        factory: Callable[[], StreamNormalizer],
        implementation: Mapping[str, str],
        options: Mapping[str, Any] | None = None,
        whole: WholeFunction | None = None,
    ) -> None:
        from conformance.contracts import registered

        self.factory = factory
        self.whole = whole
        # The other contracts' ops this normalizer answers: those it has the method for.
        self.methods = {entry.NAME: entry.METHOD for entry in registered()}
        sample = factory()
        capabilities = [name for name, method in self.methods.items() if hasattr(sample, method)]
        self.hello = {
            "protocol": PROTOCOL_VERSION,
            "implementation": dict(implementation),
            "options": dict(options or {}),
            **({"capabilities": capabilities} if capabilities else {}),
        }

    def __call__(self, request: Any) -> dict[str, Any] | None:
        """The response to one request; None for `bye`."""
        if not isinstance(request, dict):
            return {"id": None, "error": f"a request must be a JSON object, not {request!r}"}
        op = request.get("op")
        ident = request.get("id")
        try:
            if op == "stream":
                normalizer = self.factory()
                deltas = [_delta(normalizer.feed(chunk)) for chunk in request["chunks"]]
                deltas.append(_delta(normalizer.finish()))
                return {"id": ident, "deltas": deltas}
            if op == "whole":
                return {
                    "id": ident,
                    **self._whole(request.get("content"), request.get("reasoning")),
                }
            if op == "hello":
                if request.get("protocol") != PROTOCOL_VERSION:
                    return {
                        "error": f"this implementation speaks protocol {PROTOCOL_VERSION}, "
                        f"not {request.get('protocol')!r}"
                    }
                return self.hello
            if op == "bye":
                return None
            if op in self.methods:
                method = getattr(self.factory(), self.methods[op], None)
                if method is None:
                    return {"id": ident, "unsupported": f"this implementation does not {op}"}
                payload = {k: v for k, v in request.items() if k not in ("op", "id")}
                return {"id": ident, **method(**payload)}
        except Exception as error:  # a caught failure is data for the harness, not a crash
            return {"id": ident, "error": f"{type(error).__name__}: {error}"}
        return {"id": ident, "unsupported": f"unknown op {op!r}"}

    def _whole(self, content: str | None, reasoning: str | None) -> dict[str, str]:
        if self.whole is not None:
            return _delta(self.whole(content, reasoning))
        normalizer = self.factory()
        first = normalizer.feed({"content": content, "reasoning": reasoning})
        last = normalizer.finish()
        return {key: first[key] + last[key] for key in ("assistant", "thinking")}


def _delta(delta: Mapping[str, str]) -> dict[str, str]:
    return {"assistant": delta["assistant"], "thinking": delta["thinking"]}


def serve_handler(
    handler: Callable[[Any], dict[str, Any] | None], stdin: int = 0, stdout: BinaryIO | None = None
) -> None:
    """Answer JSON lines from file descriptor `stdin` until `bye` or end of input."""
    out = stdout if stdout is not None else sys.stdout.buffer
    pending: list[bytes] = []
    while True:
        data = os.read(stdin, 1 << 16)
        if not data:
            return
        if b"\n" not in data:
            # Part of a long request: join once it ends, not on every read.
            pending.append(data)
            continue
        *lines, rest = data.split(b"\n")
        lines[0] = b"".join([*pending, lines[0]])
        pending = [rest] if rest else []
        responses = []
        done = False
        for line in lines:
            if not line.strip():
                continue
            try:
                request = json.loads(line)
            except ValueError as error:
                response: dict[str, Any] | None = {"id": None, "error": f"not JSON: {error}"}
            else:
                response = handler(request)
            if response is None:
                done = True
                break
            responses.append(json.dumps(response).encode("ascii") + b"\n")
        out.write(b"".join(responses))
        out.flush()
        if done:
            return


def serve(
    factory: Callable[[], StreamNormalizer],
    implementation: Mapping[str, str],
    options: Mapping[str, Any] | None = None,
    whole: WholeFunction | None = None,
) -> None:
    """Run a protocol-1 implementation on standard input and output."""
    serve_handler(Handler(factory, implementation, options, whole))
