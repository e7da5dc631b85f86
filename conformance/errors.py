"""Errors the harness raises for problems it cannot turn into a result: one tree.

An implementation that misbehaves during a run is not an error here: that becomes an ERROR or
TIMEOUT result. These are for a run that cannot start, a request that cannot be served, or
work that failed. Every exception class of the package derives from `ConformanceError` (the
few signals that must not be caught as errors aside: tests/test_errors.py names them), and
each says, in `exit_status`, the exit status of a command it ends: the command line prints
`error: <message>` and exits with it, reading the attribute rather than listing classes.
docs/errors.md lists the tree.
"""

from __future__ import annotations

from typing import ClassVar


class ConformanceError(Exception):
    """Base class: the message says what went wrong and what to do.

    Exit status 2 unless a subclass says otherwise: the command could not do what it was
    asked (README, "Exit status")."""

    exit_status: ClassVar[int] = 2


class UsageError(ConformanceError):
    """Bad command-line input or configuration, or a file the harness cannot read (a case
    file, a capture, a results file): exit status 2."""

    exit_status: ClassVar[int] = 2


class ImplementationStartError(ConformanceError):
    """An implementation could not be started or did not answer `hello` correctly: exit
    status 2."""

    exit_status: ClassVar[int] = 2

    def __init__(self, label: str, message: str, stderr: str | None = None) -> None:
        self.label = label
        self.stderr = stderr
        detail = f"\n--- stderr (last lines) ---\n{stderr}" if stderr else ""
        super().__init__(f"implementation {label!r}: {message}{detail}")


class Failure(ConformanceError):
    """Work that ran and failed: a recording, a measurement, a check: exit status 1, as for
    a failing result."""

    exit_status: ClassVar[int] = 1


__all__ = ["ConformanceError", "Failure", "ImplementationStartError", "UsageError"]
