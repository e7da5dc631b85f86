"""Serve a Python normalizer over the implementation protocol (docs/PROTOCOL.md), so that
`conformance run --impl cmd:...` can drive it like a program in any other language.

    from conformance.server import serve    # its public import path
    serve(MyNormalizer, implementation={"name": "mine", "version": "1.0", "language": "python"})

Requests are decoded and replies encoded by the codec, and answered by the same code as the
in-process connection (`inprocess.answer`). They are read in whatever batches the pipe
delivers and answered in one write per batch, which keeps a pipelining harness fast.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Mapping
from typing import Any, BinaryIO

from conformance.contracts import op_contracts
from conformance.interface import StreamNormalizer
from conformance.model.requests import Error, Unsupported
from conformance.transport.codec import (
    Addressed,
    Bye,
    Hello,
    decode_request,
    encode_reply,
    hello_reply,
    loads_line,
    refuse_hello,
)
from conformance.transport.inprocess import WholeFunction, answer, describe
from conformance.transport.lines import LineBuffer

__all__ = ["Handler", "WholeFunction", "serve", "serve_handler"]

#: `json.dumps` with its defaults, without looking at its arguments for every reply.
_encode = json.JSONEncoder().encode


class Handler:
    """Answers protocol requests (decoded JSON objects) with response objects."""

    def __init__(
        self,
        factory: Callable[[], StreamNormalizer],
        implementation: Mapping[str, str],
        options: Mapping[str, Any] | None = None,
        whole: WholeFunction | None = None,
        *,
        trusted: bool = False,
    ) -> None:
        self.factory = factory
        self.whole = whole
        #: The factory is the bundled reference (`inprocess.answer`).
        self.trusted = trusted
        # The other contracts' ops this normalizer answers: those it has the method for.
        self.methods = {entry.NAME: entry.METHOD for entry in op_contracts()}
        sample = factory()
        capabilities = [name for name, method in self.methods.items() if hasattr(sample, method)]
        self.hello = hello_reply(implementation, options, capabilities)

    def __call__(self, message: Any) -> dict[str, Any] | None:
        """The response to one request; None for `bye`."""
        decoded = decode_request(message, self.methods)
        if type(decoded) is Addressed:  # the common case first
            request = decoded.request
            if isinstance(request, (Error, Unsupported)):
                return encode_reply(decoded.ident, request)
            try:
                reply = answer(self.factory, request, self.whole, fresh=True, trusted=self.trusted)
            except BaseException as error:  # even SystemExit: data for the harness, not a crash
                reply = Error(describe(error))
            return encode_reply(decoded.ident, reply)
        if isinstance(decoded, Hello):
            if decoded.protocol != self.hello["protocol"]:
                return refuse_hello(decoded.protocol)
            return self.hello
        assert isinstance(decoded, Bye)
        return None


def serve_handler(
    handler: Callable[[Any], dict[str, Any] | None],
    stdin: int = 0,
    stdout: BinaryIO | None = None,
    *,
    each: bool = False,
) -> None:
    """Answer JSON lines from file descriptor `stdin` until `bye` or end of input.

    `each`: write every reply as soon as it is made, rather than once per batch read: slower,
    but a process that dies then leaves every earlier reply behind, so the harness charges
    the request that killed it (`python-isolated:` does this)."""
    out = stdout if stdout is not None else sys.stdout.buffer
    buffer = LineBuffer()
    while data := os.read(stdin, 1 << 16):
        responses = []
        done = False
        for line in buffer.feed(data):
            if not line.strip():
                continue
            try:
                request = loads_line(line)
            except (ValueError, RecursionError) as error:
                response: dict[str, Any] | None = {"id": None, "error": f"not JSON: {error}"}
            else:
                response = handler(request)
            if response is None:
                done = True
                break
            responses.append(_encode(response).encode("ascii") + b"\n")
            if each:
                out.write(responses.pop())
                out.flush()
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
