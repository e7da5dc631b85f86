"""What a session tells its handlers: it started, a result came, progress, it finished.

Handlers are the session's only outputs: the terminal summary, the progress line, the report
writers and the pytest plugin all subscribe to the same events, so a run-level fact (the
total, an interruption, a problem) is decided once and every output agrees.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from conformance.model.results import CaseResult, FuzzResult, ImplementationInfo, Run


@dataclass(frozen=True, slots=True)
class Started:
    """The session began: what it will run, and how many results it expects in all."""

    labels: Sequence[str]
    total: int


@dataclass(frozen=True, slots=True)
class ImplementationStarted:
    info: ImplementationInfo
    total: int


@dataclass(frozen=True, slots=True)
class ResultEvent:
    label: str
    result: CaseResult | FuzzResult


@dataclass(frozen=True, slots=True)
class Progress:
    label: str
    #: Results so far for this implementation, and how many it will have.
    done: int
    total: int
    #: The same over the whole session.
    session_done: int
    session_total: int


@dataclass(frozen=True, slots=True)
class Finished:
    run: Run
    status: int


class Handler:
    """Receives a session's events; override what you need (every method does nothing)."""

    def started(self, event: Started) -> None:
        pass

    def implementation_started(self, event: ImplementationStarted) -> None:
        pass

    def result(self, event: ResultEvent) -> None:
        pass

    def progress(self, event: Progress) -> None:
        pass

    def finished(self, event: Finished) -> None:
        pass


def listeners(handlers: Sequence[Handler]) -> dict[str, list[Callable[[Any], None]]]:
    """Each event's listeners, by its method's name: the handlers' methods that do something
    with it. Those left as Handler's do nothing, and a matrix counts 260,000 results."""
    names = ("started", "implementation_started", "result", "progress", "finished")
    return {
        name: [
            getattr(handler, name)
            for handler in handlers
            if getattr(type(handler), name, None) is not getattr(Handler, name)
        ]
        for name in names
    }
