"""The matrix's progress on standard error: each implementation as it is served from the
cache or finishes, and every `interval` seconds what runs (checks done of its total, or the
part it is in: fingerprint, growth, bench) with an estimate of the time left.

The estimate comes from the rates observed: the seconds per check of the implementations that
finished (their whole work, fingerprint and measurements included), or while none has, of
those running, each divided by the job's relative cost (a client driven through HTTP costs ten
times a parser in process: the matrix starts those first, and their pace alone would put
hours on the parsers waiting). What is still running needs its remaining checks at its own
pace; what waits, its checks at the observed rate times its cost; the workers share that out
(`jobs` at a time). What the cache serves costs nothing and is left out.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TextIO

from conformance.session.events import (
    Finished,
    Handler,
    ImplementationStarted,
    Progress,
    Started,
)


@dataclass(slots=True)
class _Running:
    total: int
    began: float
    cost: float = 1.0
    done: int = 0
    phase: str = "corpus"


class MatrixProgress(Handler):
    def __init__(
        self,
        jobs: int,
        stream: TextIO | None = None,
        *,
        interval: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.jobs = max(1, jobs)
        self.stream = stream
        self.interval = interval
        self.clock = clock
        self._lock = threading.Lock()
        self._ended = threading.Event()
        #: label -> whether the cache serves it
        self._served: dict[str, bool] = {}
        self._totals: dict[str, int] = {}
        #: label -> the job's relative cost (Job.cost), 1 when not told
        self._costs: dict[str, float] = {}
        self._running: dict[str, _Running] = {}
        #: (checks times cost, seconds) of each implementation that ran and finished
        self._finished: list[tuple[float, float]] = []
        self._cached = 0
        #: Labels that finished (run or served) or were skipped.
        self._over: set[str] = set()
        self._began = clock()

    def expect(self, served: Mapping[str, bool], costs: Mapping[str, float] | None = None) -> None:
        self._served = dict(served)
        self._costs = dict(costs or {})

    # session events

    def started(self, event: Started) -> None:
        self._began = self.clock()
        self._totals = dict.fromkeys(event.labels, event.total // max(len(event.labels), 1))
        self._served = {label: self._served.get(label, False) for label in event.labels}
        left = sum(not self._served.get(label, False) for label in event.labels)
        served = len(event.labels) - left
        self._say(
            f"matrix: {len(event.labels)} implementations, {served} served from the cache, "
            f"{left} to run ({self.jobs} at a time)"
        )
        threading.Thread(target=self._beat, name="matrix-progress", daemon=True).start()

    def implementation_started(self, event: ImplementationStarted) -> None:
        with self._lock:
            label = event.info.label
            self._totals[label] = event.total
            if not self._served.get(label, False):
                cost = self._costs.get(label, 1.0)
                self._running[label] = _Running(event.total, self.clock(), cost)

    def progress(self, event: Progress) -> None:
        with self._lock:
            running = self._running.get(event.label)
            if running is not None:
                running.done = event.done

    def finished(self, event: Finished) -> None:
        self._ended.set()
        seconds = self.clock() - self._began
        ran = len(self._finished)
        self._say(
            f"matrix: done in {seconds:.0f} s ({ran} run, {self._cached} served from the cache)"
        )

    # the matrix's own news

    def phase(self, label: str, name: str) -> None:
        with self._lock:
            if name in ("skipped", "cached"):
                self._over.add(label)
            if name == "skipped":
                self._served.pop(label, None)
                return
            if name == "cached":
                self._cached += 1
                self._say(f"{label}: served from the cache")
                return
            running = self._running.get(label)
            if name == "done" and running is not None:
                del self._running[label]
                self._over.add(label)
                seconds = self.clock() - running.began
                self._finished.append((running.total * running.cost, seconds))
                self._say(
                    f"{label}: done in {seconds:.0f} s ({running.total} checks){self._left()}"
                )
            elif running is not None:
                running.phase = name

    # the estimate

    def estimate(self) -> float | None:
        """Seconds left, or None while nothing has shown a rate."""
        now = self.clock()
        # Seconds per check at cost 1.
        checks = sum(c for c, _ in self._finished)
        rate = sum(s for _, s in self._finished) / checks if checks else None
        if rate is None:
            seen = [(now - r.began) / r.done / r.cost for r in self._running.values() if r.done]
            rate = sum(seen) / len(seen) if seen else None
        if rate is None:
            return None
        busy = []
        for running in self._running.values():
            pace = (now - running.began) / running.done if running.done else rate * running.cost
            busy.append(max(pace * (running.total - running.done), 0.0))
        waiting = [
            self._totals.get(label, 0) * rate * self._costs.get(label, 1.0)
            for label, served in self._served.items()
            if not served and label not in self._running and label not in self._over
        ]
        return max(max(busy, default=0.0), (sum(busy) + sum(waiting)) / self.jobs)

    def _left(self) -> str:
        seconds = self.estimate()
        if seconds is None or (not self._running and not self._waiting()):
            return ""
        said = f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.0f} min"
        return f"; about {said} left"

    def _waiting(self) -> int:
        return sum(label not in self._over for label in self._served) - len(self._running)

    def status(self) -> str:
        parts = [
            f"{label} {r.done}/{r.total} checks" if r.phase == "corpus" else f"{label} {r.phase}"
            for label, r in self._running.items()
        ]
        done = len(self._finished) + self._cached
        return (
            f"matrix: {done}/{len(self._served)} implementations done; running: "
            f"{', '.join(parts) or 'nothing'}{self._left()}"
        )

    def _beat(self) -> None:
        while not self._ended.wait(self.interval):
            with self._lock:
                if self._running:
                    self._say(self.status())

    def _say(self, text: str) -> None:
        stream = self.stream or sys.stderr
        stream.write(text + "\n")
        stream.flush()
