"""Answering a request with a Python normalizer: for `python:` (in this process) and for
`conformance.server` (the same code behind the protocol, in the implementation's process).

Whatever the implementation does (raises anything, even `SystemExit`; returns malformed
deltas or `str` subclasses; runs past its time) becomes a `Reply`.
"""

from __future__ import annotations

import json
import time
from collections import deque
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
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
#: How many requests the worker of a `python:` implementation is handed ahead of the reply
#: being waited for (InProcessConnection._on_worker).
AHEAD = 32


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
        start = 0
        while start < len(requests):
            # From the first request on, or from the one after a timeout (to a fresh worker,
            # each request checked against what the quarantine has learnt since).
            start = yield from self._on_worker(requests, start)

    def _on_worker(self, requests: Sequence[Request], start: int) -> Generator[Reply, None, int]:
        """The replies from `start` on, until the end or a timeout (then the index after it).

        Up to AHEAD requests are handed to the worker ahead of the reply waited for, so that
        its thread goes from one to the next rather than waiting for this one to hand each
        over: that cost more than the reference's own time. Each reply is waited for at most
        the timeout from the moment the one before it came (or from the first hand-over)."""
        assert self._worker is not None
        worker, factory, quarantine = self._worker, self.factory, self.quarantine
        ahead: deque[tuple[Request, Timeout | None]] = deque()
        handed = start
        try:
            for index in range(start, len(requests)):
                while handed < len(requests) and len(ahead) < AHEAD:
                    request = requests[handed]
                    blocked = quarantine.check(request)
                    if blocked is None:
                        worker.submit(partial(answer, factory, request))
                    ahead.append((request, blocked))
                    handed += 1
                request, blocked = ahead.popleft()
                if blocked is not None:
                    yield blocked
                    continue
                outcome = worker.take(self.timeout)
                if outcome.late:
                    ahead.clear()  # never run: the worker is abandoned with them
                    self._worker = worker.replaced()
                    quarantine.timed_out(request)
                    yield Timeout(f"no reply within {self.timeout:g} s")
                    return index + 1
                quarantine.answered(request)
                if outcome.error is not None:
                    yield Error(f"raised {describe(outcome.error)}")
                else:
                    yield outcome.value
        finally:
            if any(blocked is None for _, blocked in ahead):
                # Left before their replies were taken (a stop, an error in the caller):
                # they must not run, nor their outcomes come first for the next requests.
                worker.abandon()
                self._worker = worker.replaced()
        return len(requests)

    def _bare(self, request: Request) -> Reply:
        try:
            return answer(self.factory, request, trusted=self.is_reference)
        except (Exception, SystemExit, GeneratorExit) as error:  # a result, not our failure
            return Error(f"raised {describe(error)}")

    def close(self) -> None:
        if self._worker is not None:
            self._worker.abandon()
