"""Time limits and interrupts for an implementation running in this very process.

A `python:` implementation runs on the harness's own thread, so a hang would hang the run and
`raise KeyboardInterrupt` inside it would look like the user's Ctrl-C. While a batch runs, the
watchdog therefore (on the main thread, where signals are delivered):

- arms a periodic SIGALRM; its handler raises `Overtime` inside the implementation once the
  current request has run longer than the timeout (it interrupts `time.sleep`, blocking I/O and
  pure-Python loops; C code that never returns to the interpreter needs `python-isolated:`);
- wraps the SIGINT handler to note that a real interrupt arrived, so that the connection can
  tell the user's Ctrl-C (re-raised: the run stops) from an implementation's own
  `KeyboardInterrupt` (an ERROR for its request).

The previous handlers and timer are restored when the batch ends.
"""

from __future__ import annotations

import signal
import threading
import time
from types import FrameType, TracebackType
from typing import Any


class Overtime(BaseException):
    """Raised inside an implementation that ran past its time.

    A BaseException so that an implementation's `except Exception` does not swallow it."""


class Watchdog:
    """Per-request time limit and interrupt detection for one batch (a context manager)."""

    def __init__(self, timeout: float | None) -> None:
        self.timeout = timeout
        #: A real SIGINT arrived during the batch.
        self.interrupted = False
        self._started = 0.0
        self._armed = False
        self._active = False
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> Watchdog:
        self.interrupted = False
        # Signal handlers can only be set from the main thread; elsewhere there is no limit
        # (docs/implementations.md says to use `python-isolated:` there).
        self._active = threading.current_thread() is threading.main_thread()
        if not self._active:
            return self
        self._previous[signal.SIGINT] = signal.signal(signal.SIGINT, self._interrupt)
        if self.timeout is not None:
            self._previous[signal.SIGALRM] = signal.signal(signal.SIGALRM, self._alarm)
            # Checked often enough to fire within a tenth of the timeout of its end.
            period = min(max(self.timeout / 10, 0.01), 0.5)
            signal.setitimer(signal.ITIMER_REAL, period, period)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._armed = False
        if not self._active:
            return
        if signal.SIGALRM in self._previous:
            signal.setitimer(signal.ITIMER_REAL, 0)
        for number, handler in self._previous.items():
            signal.signal(number, handler)
        self._previous.clear()

    def start(self) -> None:
        """A request starts: its clock starts."""
        self._started = time.monotonic()
        self._armed = True

    def stop(self) -> None:
        self._armed = False

    @property
    def limited(self) -> bool:
        """Whether requests are actually timed (main thread and a timeout)."""
        return self._active and self.timeout is not None

    def _alarm(self, signum: int, frame: FrameType | None) -> None:
        overrun = self.timeout is not None and time.monotonic() - self._started >= self.timeout
        if self._armed and overrun:
            # Raised again at every tick while the request overruns: an implementation that
            # catches it once cannot keep the run waiting.
            raise Overtime

    def _interrupt(self, signum: int, frame: FrameType | None) -> None:
        self.interrupted = True
        previous = self._previous.get(signal.SIGINT)
        if callable(previous):
            previous(signum, frame)
        elif previous != signal.SIG_IGN:
            raise KeyboardInterrupt
