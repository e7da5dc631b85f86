"""Errors the harness raises for problems it cannot turn into a result.

An implementation that misbehaves during a run is not an error here: that becomes an ERROR or
TIMEOUT result. These are for a run that cannot start or a request that cannot be served.
"""

from __future__ import annotations


class ConformanceError(Exception):
    """Base class: the message says what went wrong and what to do."""


class UsageError(ConformanceError):
    """Bad command-line input or configuration (exit status 2)."""


class ImplementationStartError(ConformanceError):
    """An implementation could not be started or did not answer `hello` correctly."""

    def __init__(self, label: str, message: str, stderr: str | None = None) -> None:
        self.label = label
        self.stderr = stderr
        detail = f"\n--- stderr (last lines) ---\n{stderr}" if stderr else ""
        super().__init__(f"implementation {label!r}: {message}{detail}")


__all__ = ["ConformanceError", "ImplementationStartError", "UsageError"]
