"""`cmd:` implementations: a long-lived process speaking protocol 1 (docs/PROTOCOL.md).

Requests are pipelined: a batch's request lines go out while its replies come back, so the
harness and the implementation work at the same time instead of waiting on round trips. The
calling thread writes what fits in the pipe and reads replies with `os.read` in 64 KiB pieces
(no thread handoff per reply); a writer thread takes over only when a batch does not fit, so a
full pipe never deadlocks. A drain thread keeps stderr flowing into a bounded tail.

Whatever the process does wrong becomes a `Reply`. After a timeout, a crash or a reply that
leaves the stream out of step, the process is killed (with its process group, so wrappers'
children go too), restarted, and the rest of the batch is sent again.

POSIX only: it relies on `poll` on pipes, non-blocking pipes and process groups.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import json
import math
import os
import select
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Iterator, Sequence
from importlib import resources
from typing import Any

import jsonschema

from conformance._version import PROTOCOL_VERSION
from conformance.errors import ImplementationStartError
from conformance.model.results import ImplementationInfo
from conformance.transport.connections import (
    OpRequest,
    Reply,
    Request,
    StreamRequest,
    stream_reply,
    whole_reply,
)
from conformance.transport.spec import DEFAULT_TIMEOUT, ImplementationSpec, effective_options

#: Starting a runtime (a JVM, `npx`, a cold Python) can take longer than answering a request,
#: so `hello` gets at least this long even when the request timeout is short.
MIN_START_TIMEOUT = 5.0
#: Restarts in a row without a single reply in between before the harness gives up.
MAX_RESTARTS = 3
STDERR_TAIL_BYTES = 8192
STDERR_TAIL_LINES = 50
#: How much of an offending line a message quotes.
QUOTE_CHARS = 200
#: A reply line longer than this is treated as runaway output rather than buffered forever.
MAX_LINE_BYTES = 1 << 28
READ_SIZE = 1 << 16
#: Requests encoded per write: small enough that the implementation starts early.
WRITE_SLICE = 64
#: How long a process gets to exit on its own (after `bye`, or after closing stdout).
EXIT_GRACE = 0.5
#: How long to wait for helper threads once their process is dead.
JOIN_GRACE = 1.0

HELLO = (json.dumps({"op": "hello", "protocol": PROTOCOL_VERSION}) + "\n").encode()
BYE = (json.dumps({"op": "bye"}) + "\n").encode()


# --- wire format ------------------------------------------------------------------------------


def encode_request(request: Request, ident: str) -> bytes:
    """One request line. ASCII-only JSON (non-ASCII as \\u escapes) is valid UTF-8 and cannot
    be split wrongly by a reader that treats U+2028 or U+0085 as line breaks."""
    return (json.dumps(request.to_wire(ident), separators=(",", ":")) + "\n").encode("ascii")


def quote(line: bytes | str) -> str:
    text = line.decode("utf-8", "replace") if isinstance(line, bytes) else line
    if len(text) > QUOTE_CHARS:
        text = text[:QUOTE_CHARS] + f"... ({len(text)} characters)"
    return repr(text)


@functools.cache
def protocol_schema(name: str) -> dict[str, Any]:
    """A schema of conformance/schemas/protocol/, e.g. `stream-response`."""
    path = resources.files("conformance.schemas").joinpath("protocol").joinpath(f"{name}.json")
    return json.loads(path.read_text("utf-8"))


@functools.cache
def protocol_validator(name: str) -> jsonschema.protocols.Validator:
    return jsonschema.Draft202012Validator(protocol_schema(name))


def protocol_violation(message: Any, schema: str) -> str | None:
    """`<json path>: <message>` for the first violation of a schema, or None."""
    errors = protocol_validator(schema).iter_errors(message)
    # best_match of the first error alone: it descends into a oneOf to the branch that
    # nearly matched, which says more than "is not valid under any of the given schemas".
    error = jsonschema.exceptions.best_match(itertools.islice(errors, 1))
    return None if error is None else f"{error.json_path}: {error.message}"


def response_schema(message: dict[str, Any], request: Request) -> str:
    if "error" in message:
        return "error-response"
    if "unsupported" in message:
        return "unsupported-response"
    if isinstance(request, OpRequest):
        return f"{request.op}-response"
    return "stream-response" if isinstance(request, StreamRequest) else "whole-response"


# --- one process --------------------------------------------------------------------------------


class _EndOfOutput(Exception):
    """The process closed its standard output."""


class _Writer(threading.Thread):
    """Feeds request lines to a process whose stdin pipe is full."""

    def __init__(self, fd: int, pieces: Iterator[bytes]) -> None:
        super().__init__(name="conformance-writer", daemon=True)
        self.fd = fd
        self.pieces = pieces
        self.stopped = False
        self.poller = select.poll()
        self.poller.register(fd, select.POLLOUT)

    def run(self) -> None:
        for piece in self.pieces:
            view = memoryview(piece)
            while view:
                if self.stopped:
                    return
                try:
                    written = os.write(self.fd, view)
                except BlockingIOError:
                    # A timeout rather than a plain wait, so that `stopped` is noticed even if
                    # the process holds its stdin open without ever reading it.
                    self.poller.poll(100)
                    continue
                except OSError:  # the process is gone; the reader reports it
                    return
                view = view[written:]


class _Process:
    """A started implementation process: its pipes, stderr tail and reply lines."""

    def __init__(self, argv: Sequence[str]) -> None:
        # A session of its own: killing the group also ends children of a wrapper script,
        # which would otherwise hold the pipes open.
        self.popen = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            bufsize=0,
            start_new_session=True,
        )
        assert self.popen.stdin and self.popen.stdout and self.popen.stderr
        self.stdin = self.popen.stdin.fileno()
        self.stdout = self.popen.stdout.fileno()
        # poll, not select: select cannot watch descriptors above 1023.
        self.poller = select.poll()
        self.poller.register(self.stdout, select.POLLIN)
        # Non-blocking, so the calling thread writes what fits and never waits on the pipe.
        os.set_blocking(self.stdin, False)
        self.lines: deque[bytes] = deque()
        self.partial: list[bytes] = []
        self.partial_size = 0
        self.writer: _Writer | None = None
        self.stderr_tail = bytearray()
        self.stderr_cut = False
        self.drain = threading.Thread(target=self._drain, name="conformance-stderr", daemon=True)
        self.drain.start()
        self.status: int | None = None
        self.killed = False

    # stdin

    def write(self, pieces: Iterator[bytes]) -> None:
        """Write request lines: what fits now, the rest from a writer thread."""
        for piece in pieces:
            try:
                written = os.write(self.stdin, piece)
            except BlockingIOError:
                written = 0
            except OSError:  # already gone: reading will say how
                return
            if written < len(piece):
                rest = itertools.chain((piece[written:],), pieces)
                self.writer = _Writer(self.stdin, rest)
                self.writer.start()
                return

    def say_bye(self) -> None:
        """Ask the process to exit: `bye`, then end of input."""
        self.finish_writing()
        if self._writer_alive():  # it still owns stdin
            return
        with contextlib.suppress(OSError):  # gone already, or not reading: it gets killed
            os.write(self.stdin, BYE)
        assert self.popen.stdin
        self.popen.stdin.close()

    def finish_writing(self) -> None:
        if self.writer is not None:
            self.writer.stopped = True
            self.writer.join(JOIN_GRACE)

    # stdout

    def read_line(self, deadline: float) -> bytes | None:
        """The next non-blank line, or None if none arrives before `deadline`.

        Raises _EndOfOutput when stdout closes first."""
        lines = self.lines
        while True:
            while not lines:
                if not self._fill(deadline):
                    return None
            line = lines.popleft()
            if line and not line.isspace():
                return line

    def _fill(self, deadline: float) -> bool:
        remaining = deadline - time.monotonic()
        # Polled even after the deadline: a reply already in the pipe is not late.
        if not self.poller.poll(max(0, math.ceil(remaining * 1000))):
            return False
        data = os.read(self.stdout, READ_SIZE)
        if not data:
            raise _EndOfOutput
        if b"\n" not in data:
            # Most of a long line: keep the piece, join once when the line ends (joining on
            # every read would make long replies quadratic).
            self.partial.append(data)
            self.partial_size += len(data)
            if self.partial_size > MAX_LINE_BYTES:
                # Handed on as a line: whoever reads it reports it as unreadable.
                self.lines.append(b"".join(self.partial)[:READ_SIZE])
                self.partial.clear()
                self.partial_size = 0
            return True
        parts = data.split(b"\n")
        if self.partial:
            self.partial.append(parts[0])
            parts[0] = b"".join(self.partial)
            self.partial.clear()
            self.partial_size = 0
        last = parts.pop()
        if last:
            self.partial.append(last)
            self.partial_size += len(last)
            if self.partial_size > MAX_LINE_BYTES:
                # Handed on as a line: whoever reads it reports it as unreadable.
                parts.append(b"".join(self.partial)[:READ_SIZE])
                self.partial.clear()
                self.partial_size = 0
        self.lines.extend(parts)
        return True

    # stderr

    def _drain(self) -> None:
        assert self.popen.stderr
        fd = self.popen.stderr.fileno()
        tail = self.stderr_tail
        try:
            while data := os.read(fd, READ_SIZE):
                tail += data
                if len(tail) > STDERR_TAIL_BYTES:
                    del tail[: len(tail) - STDERR_TAIL_BYTES]
                    self.stderr_cut = True
        except OSError:
            pass
        finally:
            # Closed here, by its only reader: closing it from another thread while this one
            # reads could hand the descriptor number to a new pipe under its feet.
            self.popen.stderr.close()

    def tail(self) -> str | None:
        """The last lines of stderr, or None if the process wrote none."""
        data = bytes(self.stderr_tail)
        if not data:
            return None
        lines = data.decode("utf-8", "replace").splitlines()
        if self.stderr_cut:
            lines = lines[1:]  # the first one is probably cut
        return "\n".join(lines[-STDERR_TAIL_LINES:]) or None

    # ending

    def wait_exit(self, grace: float) -> int | None:
        """The exit status once the process ends by itself within `grace`, else None."""
        try:
            self.status = self.popen.wait(grace)
        except subprocess.TimeoutExpired:
            return None
        return self.status

    def kill(self) -> None:
        """End the process and its group, reap it, and let the helper threads finish."""
        if self.killed:
            return
        self.killed = True
        if self.popen.returncode is None:
            # The unreaped leader keeps its process-group id from being reused, so this only
            # ever signals our own processes.
            self._kill_group()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.status = self.popen.wait(JOIN_GRACE)
        else:
            # Reaped already: a child of a wrapper script may still hold the pipes open.
            self._kill_group()
        self.finish_writing()
        self.drain.join(JOIN_GRACE)
        assert self.popen.stdin and self.popen.stdout
        if not self._writer_alive():
            self.popen.stdin.close()
        self.popen.stdout.close()

    def _kill_group(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.popen.pid, signal.SIGKILL)

    def _writer_alive(self) -> bool:
        return self.writer is not None and self.writer.is_alive()

    def describe_exit(self) -> str:
        status = self.status
        if status is None:
            text = "closed its standard output"
        elif status < 0:
            try:
                text = f"was killed by signal {signal.Signals(-status).name}"
            except ValueError:
                text = f"was killed by signal {-status}"
        else:
            text = f"exited with status {status}"
        return text + self.unfinished()

    def unfinished(self) -> str:
        """A note on output left without its newline: a classic cause of a missing reply."""
        if not self.partial:
            return ""
        return f" (after writing {quote(b''.join(self.partial))} without a newline)"


# --- the connection ---------------------------------------------------------------------------


class _StartFailure(Exception):
    def __init__(self, message: str, stderr: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.stderr = stderr


class SubprocessConnection:
    """A `cmd:` implementation: one long-lived process, restarted after it fails."""

    def __init__(
        self,
        argv: Sequence[str],
        spec: ImplementationSpec,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        validate_protocol: bool = False,
        start_timeout: float | None = None,
        max_restarts: int = MAX_RESTARTS,
    ) -> None:
        self.argv = list(argv)
        self.spec = spec
        self.timeout = timeout
        if start_timeout is None:
            start_timeout = max(timeout, MIN_START_TIMEOUT)
        self.start_timeout = start_timeout
        self.validate_protocol = validate_protocol
        self.max_restarts = max_restarts
        self._ids = itertools.count(1)
        #: Restarts since the last reply that kept the stream in step.
        self._restarts = 0
        self._gave_up: Reply | None = None
        self._last_failure = Reply(error="no failure yet")
        self._process: _Process | None = None
        self._closed = False
        try:
            self._process, hello = self._launch()
        except _StartFailure as failure:
            raise ImplementationStartError(spec.label, failure.message, failure.stderr) from None
        try:
            self.info = self._info(hello)
        except BaseException:
            self._process.kill()
            raise

    def __enter__(self) -> SubprocessConnection:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # starting

    def _launch(self) -> tuple[_Process, dict[str, Any]]:
        """A new process that has answered `hello`, and its hello reply."""
        try:
            process = _Process(self.argv)
        except OSError as error:
            raise _StartFailure(
                f"cannot run {self.argv[0]!r}: {error.strerror or error}. The words after "
                "`cmd:` must start with an executable on PATH or a path to one (split as a "
                "POSIX shell would, without running a shell)"
            ) from None
        try:
            hello = self._hello(process)
        except _StartFailure:
            process.kill()
            raise
        return process, hello

    def _hello(self, process: _Process) -> dict[str, Any]:
        process.write(iter((HELLO,)))
        deadline = time.monotonic() + self.start_timeout
        try:
            line = process.read_line(deadline)
        except _EndOfOutput:
            process.wait_exit(EXIT_GRACE)
            process.kill()
            raise _StartFailure(
                f"{process.describe_exit()} before answering hello; run the command by hand "
                f"and send it {HELLO.decode().strip()} to see why",
                process.tail(),
            ) from None
        if line is None:
            process.kill()
            raise _StartFailure(
                f"did not answer hello within {self.start_timeout:g} s{process.unfinished()}. "
                "It must answer each request line on standard input with one JSON line on "
                "standard output, and flush it (docs/PROTOCOL.md)",
                process.tail(),
            )
        try:
            reply = json.loads(line)
        except (ValueError, RecursionError):
            raise _StartFailure(
                f"answered hello with a line that is not JSON: {quote(line)}. The first line "
                "on standard output must be the hello reply; write logs to standard error",
                process.tail(),
            ) from None
        problem = self._hello_problem(reply)
        if problem:
            raise _StartFailure(f"{problem} (see docs/PROTOCOL.md)", process.tail())
        return reply

    def _hello_problem(self, reply: Any) -> str | None:
        if not isinstance(reply, dict):
            return f"answered hello with {quote(json.dumps(reply))}, not a JSON object"
        if "error" in reply and "protocol" not in reply:
            return f"refused hello: {reply['error']}"
        if reply.get("protocol") != PROTOCOL_VERSION:
            return (
                f"speaks protocol {reply.get('protocol')!r}, but this harness speaks protocol "
                f"{PROTOCOL_VERSION}"
            )
        if self.validate_protocol:
            violation = protocol_violation(reply, "hello-response")
            if violation:
                return f"protocol violation in the hello reply: {violation}"
        metadata = reply.get("implementation")
        if not isinstance(metadata, dict) or not all(
            isinstance(metadata.get(key), str) for key in ("name", "version", "language")
        ):
            return (
                "the hello reply needs `implementation`: an object with string `name`, "
                f"`version` and `language`; got {quote(json.dumps(metadata))}"
            )
        if not isinstance(reply.get("options", {}), dict):
            return f"`options` in the hello reply must be an object, not {reply['options']!r}"
        return None

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

    def _restart(self) -> bool:
        """Start a new process; give up (False) once restarts keep failing."""
        while self._restarts < self.max_restarts:
            self._restarts += 1
            try:
                self._process, _ = self._launch()
            except _StartFailure as failure:
                self._last_failure = Reply(error=failure.message, stderr=failure.stderr)
                continue
            return True
        last = self._last_failure
        self._gave_up = Reply(
            error=f"gave up after {self._restarts} restarts: {last.error}", stderr=last.stderr
        )
        return False

    def _discard(self, process: _Process, failure: Reply) -> None:
        """Kill a process that failed; the next request starts a new one."""
        process.kill()
        self._process = None
        self._last_failure = failure

    # requests

    def send(self, requests: Sequence[Request]) -> list[Reply]:
        if self._closed:
            raise ValueError(f"send() on the closed connection to {self.spec.label!r}")
        ids = [str(next(self._ids)) for _ in requests]
        replies: list[Reply] = []
        while len(replies) < len(requests):
            if self._gave_up is None and self._process is None:
                self._restart()
            if self._gave_up is not None:
                replies.extend(itertools.repeat(self._gave_up, len(requests) - len(replies)))
                break
            assert self._process is not None
            self._exchange(self._process, requests, ids, replies)
        return replies

    def _exchange(
        self, process: _Process, requests: Sequence[Request], ids: list[str], replies: list[Reply]
    ) -> None:
        """Pipeline requests[len(replies):] and append their replies, until they are all
        answered or the process fails (it is then discarded)."""
        start = len(replies)
        process.write(self._encoded(requests, ids, start))
        timeout = self.timeout
        deadline = time.monotonic() + timeout
        for index in range(start, len(requests)):
            ident = ids[index]
            try:
                line = process.read_line(deadline)
            except _EndOfOutput:
                process.wait_exit(EXIT_GRACE)
                process.kill()
                error = f"the implementation {process.describe_exit()} while answering request "
                reply = Reply(error=error + ident, stderr=process.tail())
                replies.append(reply)
                self._discard(process, reply)
                return
            if line is None:
                process.kill()
                replies.append(Reply(timeout=True, stderr=process.tail()))
                failure = f"no reply to request {ident} within {timeout:g} s"
                self._discard(process, Reply(error=failure, stderr=process.tail()))
                return
            reply = self._interpret(line, requests[index], ident, process)
            if reply is None:  # out of step: nothing later on this stream can be trusted
                process.kill()
                reply = Reply(error=self._unreadable(line, ident), stderr=process.tail())
                replies.append(reply)
                self._discard(process, reply)
                return
            replies.append(reply)
            self._restarts = 0
            deadline = time.monotonic() + timeout
        process.finish_writing()

    def _encoded(self, requests: Sequence[Request], ids: list[str], start: int) -> Iterator[bytes]:
        # Encoded lazily: the implementation works on the first slice while later ones are
        # being encoded.
        for low in range(start, len(requests), WRITE_SLICE):
            high = min(low + WRITE_SLICE, len(requests))
            yield b"".join(encode_request(requests[i], ids[i]) for i in range(low, high))

    def _interpret(
        self, line: bytes, request: Request, ident: str, process: _Process
    ) -> Reply | None:
        """The reply a line means; None if it is not a reply to this request at all."""
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):
            return None
        if type(message) is not dict or message.get("id") != ident:
            return None
        if self.validate_protocol:
            violation = protocol_violation(message, response_schema(message, request))
            if violation:
                error = f"protocol violation in reply to request {ident}: {violation}"
                return Reply(error=error, stderr=process.tail())
        if "error" in message:
            error = f"the implementation reported: {message['error']}"
            return Reply(error=error, stderr=process.tail())
        if "unsupported" in message:
            return Reply(unsupported=str(message["unsupported"]))
        if isinstance(request, OpRequest):
            # The contract judges the body; here it only has to be an object.
            return Reply(value={key: value for key, value in message.items() if key != "id"})
        if isinstance(request, StreamRequest):
            if "deltas" not in message:
                error = (
                    f"the reply to stream request {ident} has none of `deltas`, `error` and "
                    f"`unsupported`: {quote(line)}"
                )
                return Reply(error=error, stderr=process.tail())
            reply = stream_reply(message["deltas"], len(request.chunks))
        else:
            reply = whole_reply(message)
        if reply.error is not None:
            return Reply(error=reply.error, stderr=process.tail())
        return reply

    @staticmethod
    def _unreadable(line: bytes, ident: str) -> str:
        """Why a line cannot be the reply to request `ident`."""
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):
            return f"unreadable reply to request {ident}: a line that is not JSON: {quote(line)}"
        if not isinstance(message, dict):
            return f"unreadable reply to request {ident}: not a JSON object: {quote(line)}"
        return (
            f"unreadable reply to request {ident}: it has id {message.get('id')!r} where "
            f"{ident!r} was due: {quote(line)}"
        )

    # ending

    def close(self) -> None:
        """Say `bye`, give the process a moment to exit, then kill it. Never hangs."""
        self._closed = True
        process, self._process = self._process, None
        if process is None:
            return
        process.say_bye()
        process.wait_exit(EXIT_GRACE)
        process.kill()
