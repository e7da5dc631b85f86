"""Answering a request with a Python normalizer: for `python:` (in this process) and for
`conformance.server` (the same code behind the protocol, in the implementation's process).

Whatever the implementation does (raises anything, even `SystemExit`; returns malformed
deltas or `str` subclasses; runs past its time) becomes a `Reply`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import partial
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
from conformance.transport.quarantine import Quarantine, markers
from conformance.transport.worker import Worker

WholeFunction = Callable[[str | None, str | None], Mapping[str, str]]


def answer(
    factory: Callable[[], Any],
    request: Request | RawStreamRequest,
    whole: WholeFunction | None = None,
    *,
    fresh: bool = False,
    trusted: bool = False,
) -> Reply:
    """The reply of a fresh normalizer from `factory` to one request. Exceptions propagate.

    `fresh`: nothing of the implementation runs before the reply is used up (the server
    encodes it at once), so its deltas need not be copied (`stream_reply`). `trusted`: the
    factory is the bundled reference, whose deltas are plain dicts of plain strings, a new
    one each step: a stream's are taken as they are, neither checked nor copied."""
    if type(request) is RawStreamRequest:  # the server's hot path, first
        normalizer = factory()
        feed = normalizer.feed
        deltas = [feed(chunk) for chunk in request.chunks]
        return _streamed(normalizer, deltas, len(request.chunks), fresh, trusted)
    if type(request) is StreamRequest:  # the harness's
        normalizer = factory()
        feed = normalizer.feed
        # Chunk.to_json inlined: this is the hot loop of every run.
        deltas = [feed({"content": c.content, "reasoning": c.reasoning}) for c in request.chunks]
        return _streamed(normalizer, deltas, len(request.chunks), fresh, trusted)
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
    assert isinstance(request, WholeRequest)
    method = getattr(normalizer, "whole", None)
    if method is not None:
        return whole_reply(method(request.content, request.reasoning))
    chunk = {"content": request.content, "reasoning": request.reasoning}
    reply = stream_reply([normalizer.feed(chunk), normalizer.finish()], 1)
    if not isinstance(reply, Ok) or reply.deltas is None:
        return reply
    first, last = reply.deltas
    return Ok(channels={k: first[k] + last[k] for k in CHANNELS})


def _streamed(normalizer: Any, deltas: list[Any], count: int, fresh: bool, trusted: bool) -> Reply:
    deltas.append(normalizer.finish())
    if trusted and len(deltas) == count + 1:
        return Ok(deltas=deltas)
    return stream_reply(deltas, count, fresh=fresh)


def describe(error: BaseException) -> str:
    """`TypeName: message` for an exception an implementation raised."""
    text = f"{type(error).__name__}: {escape_controls(str(error))}"
    if isinstance(error, SystemExit):
        text += " (an implementation must not exit; `python-isolated:` runs one that might)"
    return text


class InProcessConnection:
    """A Python normalizer in this process (`python:` and the bundled reference).

    With a `timeout`, every call runs on the implementation's own thread (`worker`), each
    request limited to the timeout, and requests that keep timing out are quarantined;
    whatever the implementation raises, `SystemExit` and `KeyboardInterrupt` included, is
    an ERROR of its request. Without one (the bundled reference) requests run bare, on the
    calling thread, at full speed.
    """

    def __init__(
        self,
        factory: Callable[[], Any],
        info: ImplementationInfo,
        timeout: float | None = None,
        *,
        is_reference: bool = False,
        worker: Worker | None = None,
    ) -> None:
        self.factory = factory
        self.info = info
        self.timeout = timeout
        self.quarantine = Quarantine(markers(info.options))
        #: The factory is the bundled reference under `info.options`: its replies are the
        #: reference's own, so judging need not run the reference again to compare them.
        self.is_reference = is_reference
        if timeout is not None and worker is None:
            worker = Worker(f"conformance-{info.label}")
        self._worker = worker

    def send(self, requests: Sequence[Request]) -> list[Reply]:
        return list(self.answers(requests))

    def cpu_seconds(self) -> float | None:
        # The implementation runs in this process, on its worker thread or on this one; the
        # thread waiting for it uses next to nothing.
        return time.process_time()

    def answers(self, requests: Sequence[Request]) -> Iterator[Reply]:
        if self._worker is None:
            for request in requests:
                yield self._bare(request)
            return
        for request in requests:
            yield self._on_worker(request)

    def _bare(self, request: Request) -> Reply:
        try:
            return answer(self.factory, request, trusted=self.is_reference)
        except (Exception, SystemExit, GeneratorExit) as error:  # a result, not our failure
            return Error(f"raised {describe(error)}")

    def _on_worker(self, request: Request) -> Reply:
        quarantined = self.quarantine.check(request)
        if quarantined is not None:
            return quarantined
        assert self._worker is not None
        outcome = self._worker.call(partial(answer, self.factory, request), self.timeout)
        if outcome.late:
            self._worker = self._worker.replaced()
            self.quarantine.timed_out(request)
            return Timeout(f"no reply within {self.timeout:g} s")
        self.quarantine.answered(request)
        if outcome.error is not None:
            return Error(f"raised {describe(outcome.error)}")
        reply: Reply = outcome.value
        return reply

    def close(self) -> None:
        if self._worker is not None:
            self._worker.abandon()
