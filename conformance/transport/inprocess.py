"""Answering a request with a Python normalizer: for `python:` (in this process) and for
`conformance.server` (the same code behind the protocol, in the implementation's process).

Whatever the implementation does (raises anything, even `SystemExit`; returns malformed
deltas or `str` subclasses; runs past its time) becomes a `Reply`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from conformance.model.chunks import CHANNELS
from conformance.model.requests import (
    Error,
    Ok,
    OpRequest,
    Reply,
    Request,
    StreamRequest,
    Timeout,
    Unsupported,
    WholeRequest,
)
from conformance.model.results import ImplementationInfo
from conformance.transport.lines import escape_controls
from conformance.transport.messages import RawStreamRequest, op_reply, stream_reply, whole_reply
from conformance.transport.quarantine import Quarantine
from conformance.transport.watchdog import Overtime, Watchdog

WholeFunction = Callable[[str | None, str | None], Mapping[str, str]]


def answer(
    factory: Callable[[], Any],
    request: Request | RawStreamRequest,
    whole: WholeFunction | None = None,
) -> Reply:
    """The reply of a fresh normalizer from `factory` to one request. Exceptions propagate."""
    if type(request) is RawStreamRequest:  # the server's hot path, first
        normalizer = factory()
        feed = normalizer.feed
        deltas = [feed(chunk) for chunk in request.chunks]
        deltas.append(normalizer.finish())
        return stream_reply(deltas, len(request.chunks))
    if isinstance(request, WholeRequest) and whole is not None:
        return whole_reply(whole(request.content, request.reasoning))
    normalizer = factory()
    if isinstance(request, OpRequest):
        method = getattr(normalizer, request.method, None)
        if method is None:
            return Unsupported(f"no {request.method}() method")
        before = json.dumps(request.payload, sort_keys=True)
        value = method(**request.payload)
        if json.dumps(request.payload, sort_keys=True) != before:
            # An op works on its input; changing it (a stored history, say) is a bug.
            return Error(f"{request.method}() changed its input in place")
        return op_reply(value, request.method)
    if isinstance(request, WholeRequest):
        method = getattr(normalizer, "whole", None)
        if method is not None:
            return whole_reply(method(request.content, request.reasoning))
        chunk = {"content": request.content, "reasoning": request.reasoning}
        reply = stream_reply([normalizer.feed(chunk), normalizer.finish()], 1)
        if not isinstance(reply, Ok) or reply.deltas is None:
            return reply
        first, last = reply.deltas
        return Ok(channels={k: first[k] + last[k] for k in CHANNELS})
    assert isinstance(request, StreamRequest)
    feed = normalizer.feed
    # Chunk.to_json inlined: this is the hot loop of every run.
    deltas = [feed({"content": c.content, "reasoning": c.reasoning}) for c in request.chunks]
    deltas.append(normalizer.finish())
    return stream_reply(deltas, len(request.chunks))


def describe(error: BaseException) -> str:
    """`TypeName: message` for an exception an implementation raised."""
    text = f"{type(error).__name__}: {escape_controls(str(error))}"
    if isinstance(error, SystemExit):
        text += " (an implementation must not exit; `python-isolated:` runs one that might)"
    return text


class InProcessConnection:
    """A Python normalizer in this process (`python:` and the bundled reference).

    With a `timeout`, each request is limited to it (see `watchdog`), a `KeyboardInterrupt`
    the implementation raises itself is an ERROR, and requests that keep timing out are
    quarantined. Without one (the bundled reference) requests run bare, at full speed.
    """

    def __init__(
        self,
        factory: Callable[[], Any],
        info: ImplementationInfo,
        timeout: float | None = None,
        *,
        is_reference: bool = False,
    ) -> None:
        self.factory = factory
        self.info = info
        self.timeout = timeout
        self.quarantine = Quarantine()
        #: The factory is the bundled reference under `info.options`: its replies are the
        #: reference's own, so judging need not run the reference again to compare them.
        self.is_reference = is_reference

    def send(self, requests: Sequence[Request]) -> list[Reply]:
        if self.timeout is None:
            return [self._bare(request) for request in requests]
        with Watchdog(self.timeout) as watchdog:
            return [self._guarded(request, watchdog) for request in requests]

    def _bare(self, request: Request) -> Reply:
        try:
            return answer(self.factory, request)
        except (Exception, SystemExit, GeneratorExit) as error:  # a result, not our failure
            return Error(f"raised {describe(error)}")

    def _guarded(self, request: Request, watchdog: Watchdog) -> Reply:
        quarantined = self.quarantine.check(request)
        if quarantined is not None:
            return quarantined
        try:
            try:
                watchdog.start()
                reply = answer(self.factory, request)
            finally:
                watchdog.stop()
        except BaseException as error:
            if watchdog.interrupted:
                # The user's Ctrl-C, even if the implementation swallowed it: the run stops.
                raise KeyboardInterrupt from error
            if isinstance(error, Overtime):
                self.quarantine.timed_out(request)
                return Timeout(f"no reply within {self.timeout:g} s")
            reply = Error(f"raised {describe(error)}")
        self.quarantine.answered(request)
        return reply

    def close(self) -> None:
        pass
