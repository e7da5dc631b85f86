"""The report directory of a session, claimed before anything runs.

A run can take minutes; a directory that cannot be written must say so at the start, not
after the work is done and lost. So the directory is made absolute (an implementation that
changes the working directory does not move the reports), created, and written to at once:
the lock file that keeps a second run off it is that first write.

The lock is an advisory `flock` on `.conformance.lock`, which holds the owner's pid for the
message a second run gets. The kernel drops the lock with the process, so a crashed run leaves
no lock behind; a lock still held for a pid that is gone (a process the run forked kept the
descriptor) is stale, and the file is replaced.

The reports of a run in which no implementation started do not replace those already in
the directory (`never_started`): a typo in `--impl` keeps the last good reports.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
from collections.abc import Iterable
from pathlib import Path

from conformance.errors import UsageError
from conformance.model.results import Run

LOCK_NAME = ".conformance.lock"


class ReportDirError(UsageError):
    """The report directory cannot be created, written or locked (another run is writing
    there): exit status 2, before the run starts; after it, when writing the reports fails."""


class ReportDirectory:
    """An absolute report directory, created, writable and locked for this process."""

    def __init__(self, directory: Path) -> None:
        self.path = Path(directory).absolute()
        self._fd: int | None = None
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise cannot_write(self.path, error) from None
        self._fd = self._lock(retry_stale=True)

    def _lock(self, *, retry_stale: bool) -> int:
        lock = self.path / LOCK_NAME
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as error:
            raise cannot_write(self.path, error) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            owner = _owner(fd)
            os.close(fd)
            if owner is not None and not _alive(owner) and retry_stale:
                with contextlib.suppress(FileNotFoundError):
                    lock.unlink()
                return self._lock(retry_stale=False)
            who = f"pid {owner}" if owner is not None else "another process"
            raise ReportDirError(
                f"{self.path}: another run ({who}) is writing its reports here; wait for it "
                "to end or give this run its own --report-dir"
            ) from None
        try:
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
            os.fsync(fd)
        except OSError as error:
            os.close(fd)
            raise cannot_write(self.path, error) from None
        return fd

    def holds_any(self, names: Iterable[str]) -> bool:
        """Whether any of the files `names` is in the directory (the reports of a previous
        run, which a run that never started does not replace)."""
        return any((self.path / name).exists() for name in names)

    def release(self) -> None:
        """Let another run have the directory; the lock file stays (removing it could let
        two runs lock two different files of the same name)."""
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)  # closing drops the flock

    def __del__(self) -> None:
        self.release()


def never_started(run: Run) -> bool:
    """Whether no implementation of `run` started (each failed to start: a typo in `--impl`,
    a program that is not there), so the run has nothing to report that replaces the last."""
    impls = run.implementations
    return bool(impls) and all(impl.failure is not None and not impl.results for impl in impls)


def cannot_write(path: Path, error: OSError) -> ReportDirError:
    reason = error.strerror or str(error)
    if error.errno == errno.ENOSPC:
        reason += " (the disk is full)"
    return ReportDirError(f"cannot write reports to {path}: {reason}")


def _owner(fd: int) -> int | None:
    try:
        return int(os.pread(fd, 32, 0).decode("ascii").strip())
    except (OSError, ValueError):
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True
