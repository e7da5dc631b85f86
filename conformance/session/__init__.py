"""Sessions: the one orchestrator (orchestrator.py), its events and standard handlers, and the
configurations of it that the commands use (`run`, `fuzz`; `matrix` and `replay` build theirs
from the same parts)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from conformance.session.events import (
    Finished,
    Handler,
    ImplementationStarted,
    Progress,
    ResultEvent,
    Started,
)
from conformance.session.handlers import (
    ProgressDisplay,
    ReportWriter,
    TerminalSummary,
    summary_table,
)
from conformance.session.orchestrator import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_SIGNAL,
    EXIT_USAGE,
    Context,
    Job,
    Session,
    SessionSettings,
    Stop,
    finish_elsewhere,
)


def standard_handlers(report_dir: Path | None, echo: Callable[..., None]) -> list[Handler]:
    """Progress on standard error, the terminal summary, and the reports (unless None)."""
    handlers: list[Handler] = [ProgressDisplay(), TerminalSummary(echo)]
    if report_dir is not None:
        handlers.append(ReportWriter(report_dir, echo))
    return handlers


__all__ = [
    "EXIT_FAILED",
    "EXIT_OK",
    "EXIT_SIGNAL",
    "EXIT_USAGE",
    "Context",
    "Finished",
    "Handler",
    "ImplementationStarted",
    "Job",
    "Progress",
    "ProgressDisplay",
    "ReportWriter",
    "ResultEvent",
    "Session",
    "SessionSettings",
    "Started",
    "Stop",
    "TerminalSummary",
    "finish_elsewhere",
    "standard_handlers",
    "summary_table",
]
