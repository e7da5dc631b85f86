"""The thread a `python:` implementation runs on, so that the harness's main thread stays free.

Python delivers signals (Ctrl-C, SIGTERM, the budget's alarm) to the main thread only, and
only between bytecodes of the code it runs. With the implementation's code (its import, its
factory and every call) on a thread of its own, the main thread only waits for each answer,
with a time limit, and can always act: on a timeout or a stop it abandons the thread and goes
on with a fresh one. Nothing has to be raised inside the implementation to stop the run, so
one that catches everything (a bare `except` retrying forever) cannot keep the run alive. An
abandoned thread is a daemon: the process does not wait for it at exit. Nothing is raised in
it: an exception set on a thread blocked in C (`PyThreadState_SetAsyncExc`) stays pending
for the whole interpreter until that thread runs again, sending every other thread's
evaluation loop down its slow path (under a tracer such as coverage's, to a crawl). A thread
that loops in Python keeps its CPU until the run ends.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Outcome:
    """How one call on the worker ended: its value, what it raised, or no answer in time."""

    value: Any = None
    error: BaseException | None = None
    late: bool = False


_LATE = Outcome(late=True)
_Call = Callable[[], Any]


class Worker:
    """One daemon thread running an implementation's calls, one at a time, in the order they
    were handed over."""

    def __init__(self, name: str) -> None:
        self._inbox: queue.SimpleQueue[_Call | None] = queue.SimpleQueue()
        self._outbox: queue.SimpleQueue[Outcome] = queue.SimpleQueue()
        self._abandoned = False
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)
        self._thread.start()

    def call(self, function: _Call, timeout: float | None) -> Outcome:
        """`function()` on the worker thread. A late call leaves the worker abandoned (use
        `replaced()`). Whatever the main thread's signal handlers raise while it waits (the
        session's stop, a plain KeyboardInterrupt) propagates; `abandon()` then ends the worker."""
        self.submit(function)
        return self.take(timeout)

    def submit(self, function: _Call) -> None:
        """Hand `function` over, to run after those handed over before it: the thread goes
        from one to the next without waiting for the main thread (`take` their outcomes)."""
        if self._abandoned:
            raise RuntimeError("submit() to an abandoned worker")
        self._inbox.put(function)

    def take(self, timeout: float | None) -> Outcome:
        """The outcome of the earliest call whose outcome was not taken, waiting at most
        `timeout` seconds for it; late, the worker is abandoned with the calls after it."""
        try:
            return self._outbox.get(timeout=timeout)
        except queue.Empty:
            self.abandon()
            return _LATE

    def replaced(self) -> Worker:
        """This worker if it can take another call, else a fresh one."""
        return Worker(self._thread.name) if self._abandoned else self

    def abandon(self) -> None:
        """Leave the thread to itself: it runs no more calls, not even those handed over."""
        if self._abandoned:
            return
        self._abandoned = True
        self._inbox.put(None)

    def _loop(self) -> None:
        inbox, outbox = self._inbox, self._outbox
        while (function := inbox.get()) is not None and not self._abandoned:
            try:
                outcome = Outcome(value=function())
            except BaseException as error:  # the implementation's, whatever it is
                outcome = Outcome(error=error)
            if self._abandoned:
                return
            outbox.put(outcome)
