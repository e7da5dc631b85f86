"""`cmd:` implementations: a long-lived process speaking protocol 1 (docs/PROTOCOL.md).

Requests are pipelined: a batch's request lines go out while its replies come back, so the
harness and the implementation work at the same time instead of waiting on round trips. What
the lines mean is the codec's business (`codec.ClientCodec`); moving them is `process`'s.
This module decides what to do when the process fails:

- a crash, or a reply that leaves the stream out of step: the process is killed (with its
  process group), restarted, and the rest of the batch is sent again;
- no reply in time: only the request that hangs is charged. While requests are pipelined
  the one due may be innocent (a server that answers a batch at once hangs on a later one),
  so the harness restarts and sends the rest one at a time ("lockstep"), where a timeout is
  certain; it stays in lockstep until a batch passes without one;
- requests like those that keep timing out are not sent again (`quarantine`);
- restarts that keep failing (no hello, or a failure before any reply) end in giving up.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Generator, Iterator, Mapping, Sequence
from typing import Any

from conformance.errors import ConformanceError, ImplementationStartError
from conformance.model.requests import Error, Reply, Request, Timeout
from conformance.model.results import ImplementationInfo
from conformance.transport.codec import (
    BYE,
    HELLO,
    ClientCodec,
    OutOfStep,
    ProtocolError,
    encode_request,
)
from conformance.transport.cputime import GroupClock
from conformance.transport.process import EndOfOutput, Process
from conformance.transport.quarantine import Quarantine, markers
from conformance.transport.spec import (
    DEFAULT_START_TIMEOUT,
    DEFAULT_TIMEOUT,
    ImplementationSpec,
    effective_options,
)

#: Restarts in a row without a single reply in between before the harness gives up.
MAX_RESTARTS = 3
#: Requests encoded per write: small enough that the implementation starts early.
WRITE_SLICE = 64
#: How long a process gets to exit on its own (after `bye`, or after closing stdout).
EXIT_GRACE = 0.5


class _StartFailure(ConformanceError):
    """A process that did not start or answer `hello`; raised as ImplementationStartError
    (exit status 2)."""

    def __init__(self, message: str, stderr: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.stderr = stderr


class _InOrder:
    """Lets replies out in request order as they are stored: quarantined ones are known
    before the batch is sent, the others as they come."""

    def __init__(self, replies: list[Reply | None]) -> None:
        self.replies = replies
        self.next = 0

    def take(self) -> Iterator[Reply]:
        replies = self.replies
        while self.next < len(replies):
            reply = replies[self.next]
            if reply is None:
                return
            self.next += 1
            yield reply


class SubprocessConnection:
    """A `cmd:` implementation: one long-lived process, restarted after it fails."""

    #: Never the bundled reference in this process: its replies are measured like any.
    is_reference = False

    def __init__(
        self,
        argv: Sequence[str],
        spec: ImplementationSpec,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        validate_protocol: bool = False,
        start_timeout: float = DEFAULT_START_TIMEOUT,
        max_restarts: int = MAX_RESTARTS,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.argv = list(argv)
        self.env = env
        self.spec = spec
        self.timeout = timeout
        #: For `hello` (starting a runtime, importing libraries), apart from `timeout`.
        self.start_timeout = start_timeout
        self.codec = ClientCodec(validate_protocol)
        self.quarantine = Quarantine()
        self.max_restarts = max_restarts
        self._ids = itertools.count(1)
        #: Restarts since the last reply that kept the stream in step.
        self._restarts = 0
        self._gave_up: Error | None = None
        self._last_failure = Error("no failure yet")
        self._process: Process | None = None
        #: One request at a time, since a recent timeout.
        self._lockstep = False
        self._closed = False
        self._clock: GroupClock | None = None
        try:
            self._process, hello = self._launch()
        except _StartFailure as failure:
            raise ImplementationStartError(spec.label, failure.message, failure.stderr) from None
        try:
            self.info = self._info(hello)
            self.quarantine.marks = markers(self.info.options)
        except BaseException:
            self._process.kill()
            raise

    def __enter__(self) -> SubprocessConnection:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # starting

    def _launch(self) -> tuple[Process, dict[str, Any]]:
        """A new process that has answered `hello`, and its hello reply."""
        try:
            process = Process(self.argv, self.env)
        except OSError as error:
            raise _StartFailure(
                f"cannot run {self.argv[0]!r}: {error.strerror or error}. The words after "
                "`cmd:` must start with an executable on PATH or a path to one (split as a "
                "POSIX shell would, without running a shell)"
            ) from None
        try:
            return process, self._hello(process)
        except _StartFailure:
            process.kill()
            raise

    def _hello(self, process: Process) -> dict[str, Any]:
        process.write(iter((HELLO,)))
        try:
            line = process.read_line(time.monotonic() + self.start_timeout)
        except EndOfOutput:
            process.ended_output(EXIT_GRACE)
            raise _StartFailure(
                f"{process.describe_exit()} before answering hello; run the command by hand "
                f"and send it {HELLO.decode().strip()} to see why",
                process.tail(),
            ) from None
        if line is None:
            raise _StartFailure(
                f"did not answer hello within {self.start_timeout:g} s{process.unfinished()} "
                "(--start-timeout). It must answer each request line on standard input with "
                "one JSON line on standard output, and flush it (docs/PROTOCOL.md)",
                process.tail(),
            )
        try:
            return self.codec.hello_reply(line)
        except ProtocolError as error:
            raise _StartFailure(str(error), process.tail()) from None

    def _info(self, hello: dict[str, Any]) -> ImplementationInfo:
        metadata = hello["implementation"]
        options = effective_options(self.spec, hello.get("options", {}))
        return ImplementationInfo(
            label=self.spec.label,
            name=metadata["name"],
            version=metadata["version"],
            language=metadata["language"],
            options=options.to_json(),
            spec=self.spec.spec,
        )

    def _restart(self) -> None:
        """Start a new process; give up once restarts keep failing."""
        while self._restarts < self.max_restarts:
            self._restarts += 1
            try:
                self._process, _ = self._launch()
            except _StartFailure as failure:
                self._last_failure = Error(failure.message, failure.stderr)
                continue
            return
        last = self._last_failure
        self._gave_up = Error(
            f"gave up after {self._restarts} restarts: {last.message}", last.stderr
        )

    def _discard(self, process: Process, failure: Error) -> None:
        """Kill a process that failed; the next request starts a new one."""
        process.kill()
        self._process = None
        self._last_failure = failure

    # requests

    def send(self, requests: Sequence[Request]) -> list[Reply]:
        if self._closed:
            raise ValueError(f"send() on the closed connection to {self.spec.label!r}")
        return list(self.answers(requests))

    def answers(self, requests: Sequence[Request]) -> Iterator[Reply]:
        """Each reply in order, as soon as it and those before it are in."""
        if self._closed:
            raise ValueError(f"answers() on the closed connection to {self.spec.label!r}")
        ids = [str(next(self._ids)) for _ in requests]
        replies: list[Reply | None] = [None] * len(requests)
        ready = _InOrder(replies)
        todo = []
        for index, request in enumerate(requests):
            replies[index] = self.quarantine.check(request)
            if replies[index] is None:
                todo.append(index)
        timeouts = 0
        done = 0
        while done < len(todo):
            if self._gave_up is None and self._process is None:
                self._restart()
            if self._gave_up is not None:
                for index in todo[done:]:
                    replies[index] = self._gave_up
                break
            assert self._process is not None
            if not self._lockstep:
                answered, timed_out = yield from self._exchange(
                    self._process, requests, ids, todo[done:], replies, ready
                )
            else:
                # Lockstep: the quarantine may have grown since the batch began.
                index = todo[done]
                quarantined = self.quarantine.check(requests[index])
                if quarantined is not None:
                    replies[index] = quarantined
                    done += 1
                    continue
                answered, timed_out = yield from self._exchange(
                    self._process, requests, ids, [index], replies, ready
                )
            yield from ready.take()
            done += answered
            if timed_out:
                timeouts += 1
                self._lockstep = True
        if not timeouts:
            self._lockstep = False
        yield from ready.take()
        assert ready.next == len(replies)

    def _exchange(
        self,
        process: Process,
        requests: Sequence[Request],
        ids: list[str],
        indices: list[int],
        replies: list[Reply | None],
        ready: _InOrder,
    ) -> Generator[Reply, None, tuple[int, bool]]:
        """Pipeline the requests at `indices` and store their replies, yielding those
        `ready` lets out, until they are all answered or the process fails (it is then
        discarded). How many were resolved, and whether a timeout happened."""
        process.write(self._encoded(requests, ids, indices))
        timeout = self.timeout
        codec, quarantine = self.codec, self.quarantine
        ready_line, read_line = process.ready_line, process.read_line
        monotonic = time.monotonic
        for position, index in enumerate(indices):
            request, ident = requests[index], ids[index]
            # A reply already read needs no wait: the deadline is taken only to wait, and from
            # then, so the time the caller spent on earlier replies is not this one's.
            line = ready_line()
            try:
                if line is None:
                    line = read_line(monotonic() + timeout)
            except EndOfOutput:
                process.ended_output(EXIT_GRACE)
                what = f"the implementation {process.describe_exit()} while answering request "
                replies[index] = failure = Error(what + ident, process.tail())
                self._discard(process, failure)
                return position + 1, False
            if line is None:
                stderr = process.tail()
                self._discard(
                    process, Error(f"no reply to request {ident} within {timeout:g} s", stderr)
                )
                if position < len(indices) - 1:
                    # Later requests were in flight: the one that hangs may be any of them.
                    return position, True
                replies[index] = Timeout(f"no reply within {timeout:g} s", stderr)
                quarantine.timed_out(request)
                # The request hung, not the process: restarting after it is no failure.
                self._restarts = 0
                return position + 1, True
            reply = codec.reply(line, request, ident)
            if isinstance(reply, OutOfStep):  # nothing later on this stream can be trusted
                replies[index] = failure = Error(reply.message, process.tail())
                self._discard(process, failure)
                return position + 1, False
            if isinstance(reply, Error):
                reply = Error(reply.message, process.tail())
            replies[index] = reply
            quarantine.answered(request)
            self._restarts = 0
            if ready.next == index:  # the next due: out now, without a generator per reply
                ready.next = index + 1
                yield reply
                if ready.next < len(replies) and replies[ready.next] is not None:
                    yield from ready.take()  # quarantined ones after it
        process.finish_writing()
        return len(indices), False

    def _encoded(
        self, requests: Sequence[Request], ids: list[str], indices: list[int]
    ) -> Iterator[bytes]:
        # Encoded lazily: the implementation works on the first slice while later ones are
        # being encoded.
        for low in range(0, len(indices), WRITE_SLICE):
            chosen = indices[low : low + WRITE_SLICE]
            yield b"".join(encode_request(requests[i], ids[i]) for i in chosen)

    def cpu_seconds(self) -> float | None:
        """CPU seconds the implementation's process group has used so far (the growth check's
        clock), or None when it has no process or the system does not say."""
        process = self._process
        if process is None:
            return None
        if self._clock is None or self._clock.group != process.popen.pid:  # a restart
            self._clock = GroupClock(process.popen.pid)
        return self._clock.seconds()

    # ending

    def close(self) -> None:
        """Say `bye`, give the process a moment to exit, then kill it. Never hangs."""
        self._closed = True
        process, self._process = self._process, None
        if process is None:
            return
        process.say_bye(BYE)
        process.wait_exit(EXIT_GRACE)
        process.kill()
