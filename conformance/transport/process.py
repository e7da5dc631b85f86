"""One implementation process and its three pipes: transport only, no protocol.

The calling thread writes what fits in the non-blocking stdin pipe and reads replies with
`os.read` in 64 KiB pieces (no thread handoff per reply); a writer thread takes over only when
a batch does not fit, so a full pipe never deadlocks. A drain thread keeps stderr flowing into
a bounded tail. The process runs in a session of its own, so that killing its group also ends
the children of a wrapper script, which would otherwise hold the pipes open. On Linux it is
also a child subreaper: a process it starts that leaves its group or session (a `setsid`
daemon) and is orphaned is adopted by it rather than by init, so the tree under it, found
through /proc when it is killed, holds everything it started.

POSIX only: it relies on `poll` on pipes, non-blocking pipes and process groups.
"""

from __future__ import annotations

import contextlib
import ctypes
import itertools
import math
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Iterator, Mapping, Sequence

from conformance.errors import ConformanceError
from conformance.transport.lines import LineBuffer, escape_controls, quote

STDERR_TAIL_BYTES = 8192
STDERR_TAIL_LINES = 50
#: Longest wait for stderr already written to reach the tail when a failure is reported.
STDERR_SETTLE = 0.2
READ_SIZE = 1 << 16
#: How long to wait for helper threads once their process is dead.
JOIN_GRACE = 1.0
#: prctl(2): the calling process adopts the orphans among its descendants.
PR_SET_CHILD_SUBREAPER = 36
_LINUX = sys.platform.startswith("linux")


def _become_subreaper() -> None:
    """Run in the child between fork and exec; the setting survives the exec."""
    ctypes.CDLL(None).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def descendants(root: int) -> list[int]:
    """The process IDs under `root`, from /proc (empty where there is none)."""
    children: dict[int, list[int]] = {}
    with contextlib.suppress(OSError):
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as stat:
                    # The command name, in parentheses, may hold spaces: the fields follow it.
                    parent = int(stat.read().rpartition(b")")[2].split()[1])
            except (OSError, ValueError, IndexError):  # gone meanwhile
                continue
            children.setdefault(parent, []).append(int(entry.name))
    found: list[int] = []
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), ()):
            found.append(child)
            todo.append(child)
    return found


class EndOfOutput(ConformanceError):
    """The process closed its standard output. Before `hello` it is a start failure (exit
    status 2); during a run, an ERROR result for the request being answered."""


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


class Process:
    """A started implementation process: its pipes, stderr tail and reply lines."""

    def __init__(self, argv: Sequence[str], env: Mapping[str, str] | None = None) -> None:
        self.popen = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            bufsize=0,
            start_new_session=True,
            env=env,
            preexec_fn=_become_subreaper if _LINUX else None,
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
        self.buffer = LineBuffer()
        self.writer: _Writer | None = None
        self.stderr_tail = bytearray()
        self.stderr_cut = False
        self.stderr_lock = threading.Lock()
        self.drain = threading.Thread(target=self._drain, name="conformance-stderr", daemon=True)
        self.drain.start()
        self.status: int | None = None
        self.killed = False
        #: The processes under it when it was asked to exit.
        self.tree: list[int] = []
        #: Set when standard output closed while the process was still running.
        self.closed_stdout = False

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

    def say_bye(self, bye: bytes) -> None:
        """Ask the process to exit: `bye`, then end of input."""
        # Its tree, while it is alive to hold it: once it exits, what it leaves running
        # (a daemon) is adopted by init, out of reach of /proc's tree.
        self.tree = descendants(self.popen.pid)
        self.finish_writing()
        if self._writer_alive():  # it still owns stdin
            return
        with contextlib.suppress(OSError):  # gone already, or not reading: it gets killed
            os.write(self.stdin, bye)
        assert self.popen.stdin
        self.popen.stdin.close()

    def finish_writing(self) -> None:
        if self.writer is not None:
            self.writer.stopped = True
            self.writer.join(JOIN_GRACE)

    # stdout

    def read_line(self, deadline: float) -> bytes | None:
        """The next non-blank line, or None if none arrives before `deadline`.

        Raises EndOfOutput when stdout closes first."""
        lines = self.lines
        while True:
            while not lines:
                if not self._fill(deadline):
                    return None
            line = lines.popleft()
            if line and not line.isspace():
                return line

    def ready_line(self) -> bytes | None:
        """The next non-blank line already read, or None (at once, without reading)."""
        lines = self.lines
        while lines:
            line = lines.popleft()
            if line and not line.isspace():
                return line
        return None

    def _fill(self, deadline: float) -> bool:
        remaining = deadline - time.monotonic()
        # Polled even after the deadline: a reply already in the pipe is not late.
        if not self.poller.poll(max(0, math.ceil(remaining * 1000))):
            return False
        data = os.read(self.stdout, READ_SIZE)
        if not data:
            raise EndOfOutput
        self.lines.extend(self.buffer.feed(data))
        return True

    # stderr

    def _drain(self) -> None:
        assert self.popen.stderr
        fd = self.popen.stderr.fileno()
        tail = self.stderr_tail
        try:
            while True:
                select.select([fd], [], [])
                # A read and its append are one step under the lock, so `_settle_stderr`
                # never sees the pipe empty while what was read is not in the tail yet.
                with self.stderr_lock:
                    data = os.read(fd, READ_SIZE)
                    if not data:
                        break
                    tail += data
                    if len(tail) > STDERR_TAIL_BYTES:
                        del tail[: len(tail) - STDERR_TAIL_BYTES]
                        self.stderr_cut = True
        except OSError:
            pass
        finally:
            # Closed here, by its only reader: closing it from another thread while this one
            # reads could hand the descriptor number to a new pipe under its feet.
            with self.stderr_lock:
                self.popen.stderr.close()

    def tail(self) -> str | None:
        """The last lines of stderr (control characters escaped), or None if it wrote none."""
        self._settle_stderr()
        data = bytes(self.stderr_tail)
        if not data:
            return None
        lines = data.decode("utf-8", "replace").splitlines()
        if self.stderr_cut:
            lines = lines[1:]  # the first one is probably cut
        return escape_controls("\n".join(lines[-STDERR_TAIL_LINES:])) or None

    def _settle_stderr(self, limit: float = STDERR_SETTLE) -> None:
        """Give the drain thread a moment to take what the pipe already holds: a failure
        should report what the implementation printed before it, however busy the machine."""
        assert self.popen.stderr
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            with self.stderr_lock:
                if self.popen.stderr.closed:
                    return
                if not select.select([self.popen.stderr], [], [], 0)[0]:
                    return
            time.sleep(0.001)

    # ending

    def wait_exit(self, grace: float) -> int | None:
        """The exit status once the process ends by itself within `grace`, else None."""
        try:
            self.status = self.popen.wait(grace)
        except subprocess.TimeoutExpired:
            return None
        return self.status

    def ended_output(self, grace: float) -> None:
        """Stdout closed: wait a moment for the exit status, then end the process."""
        if self.wait_exit(grace) is None:
            self.closed_stdout = True
        self.kill()

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
        """SIGKILL to the group and to every process under the leader, whatever its group
        or session; found first, since a killed leader's children are adopted by init."""
        tree = set(self.tree)
        if self.popen.returncode is None:
            tree.update(descendants(self.popen.pid))
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.popen.pid, signal.SIGKILL)
        for pid in tree:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)

    def _writer_alive(self) -> bool:
        return self.writer is not None and self.writer.is_alive()

    def describe_exit(self) -> str:
        status = self.status
        if self.closed_stdout or status is None:
            # Still running when its output ended: the signal that ended it was ours.
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
        partial = self.buffer.unfinished
        if not partial:
            return ""
        return f" (after writing {quote(partial)} without a newline)"
