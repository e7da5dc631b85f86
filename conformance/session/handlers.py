"""The session's standard handlers: the terminal summary, progress, and the report writer."""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TextIO

from tabulate import tabulate

from conformance.model.results import FuzzResult, Run, Verdict
from conformance.reports import FORMATS, write_reports
from conformance.reports._terminal import render_top
from conformance.session.events import (
    Finished,
    Handler,
    ImplementationStarted,
    Progress,
    ResultEvent,
    Started,
)
from conformance.session.report_dir import ReportDirectory, cannot_write, never_started


class TerminalSummary(Handler):
    """A line per fuzzing property as it ends; the summary table and problems at the end."""

    def __init__(self, echo: Callable[..., None], report: str = "") -> None:
        self.echo = echo
        #: Where the Markdown report will be, for the pointer under what to fix first.
        self.report = report

    def result(self, event: ResultEvent) -> None:
        result = event.result
        if not isinstance(result, FuzzResult):
            return
        rate = result.examples / result.seconds if result.seconds else 0.0
        bug = f" [{result.bug}]" if result.bug else ""
        line = (
            f"{event.label}: {result.property}{bug}: {result.verdict.value} after "
            f"{result.examples} examples ({rate:.0f}/s)"
        )
        self.echo(line + (f": {result.reason}" if result.reason else ""))
        if result.case_file:
            self.echo(f"  minimal case written to {result.case_file}")

    def finished(self, event: Finished) -> None:
        self.echo(summary_table(event.run))
        # What to fix first, a few lines per bug class, after the counts.
        top = render_top(event.run, report=self.report)
        if top:
            self.echo(top.rstrip("\n"))
        for problem in event.run.problems:
            self.echo(f"problem: {problem}", err=True)
        if event.run.stopped:
            not_run = sum(impl.not_run for impl in event.run.implementations)
            self.echo(f"incomplete: {event.run.stopped}; {not_run} checks not run", err=True)


class ProgressDisplay(Handler):
    """Progress on standard error: a line redrawn in place on a terminal; elsewhere (CI
    logs) a plain line now and then: every `interval` seconds, or each 10% after `minimum`.
    Both say about how long the session has left, at the pace of its checks so far.

    Whatever happens, a stalled run says so: when no result has come for `heartbeat`
    seconds (an implementation that hangs, a slow start), a thread writes a line saying
    what is running and for how long nothing came, every `heartbeat` seconds."""

    def __init__(
        self,
        stream: TextIO | None = None,
        *,
        terminal: bool | None = None,
        interval: float = 10.0,
        minimum: float = 5.0,
        heartbeat: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.stream = stream or sys.stderr
        self.terminal = self.stream.isatty() if terminal is None else terminal
        self.interval = interval
        self.minimum = minimum
        self.heartbeat = heartbeat
        self.clock = clock
        self._last = self._began = clock()
        self._tenth = 0
        self._drawn = False
        #: The last progress, as text, and when it came.
        self._latest = ""
        self._moved = clock()
        #: The heartbeat writes from its own thread.
        self._lock = threading.Lock()
        self._ended = threading.Event()

    def started(self, event: Started) -> None:
        self._latest = f"0/{event.total} checks"
        self._moved = self._began = self.clock()
        threading.Thread(target=self._beat, name="conformance-progress", daemon=True).start()

    def implementation_started(self, event: ImplementationStarted) -> None:
        with self._lock:
            self._latest = f"{event.info.label}: 0/{event.total} checks"
            self._moved = self.clock()

    def progress(self, event: Progress) -> None:
        text = f"{event.label}: {event.done}/{event.total} checks"
        with self._lock:
            self._latest = text
            self._moved = now = self.clock()
            if self.terminal:
                if event.done % 50 == 0 or event.done == event.total:
                    self._redraw(text + self._left(event, now))
                return
            tenth = event.session_done * 10 // max(event.session_total, 1)
            waited = now - self._last
            if waited >= self.interval or (tenth > self._tenth and waited >= self.minimum):
                percent = 100 * event.session_done // max(event.session_total, 1)
                left = self._left(event, now)
                self._line(f"progress: {text} ({percent}% of the session{left})")
                self._tenth = tenth

    def _left(self, event: Progress, now: float) -> str:
        """About how long the session has left, at its pace so far: said once a few
        seconds have passed, as a pace measured on less means little."""
        spent = now - self._began
        remaining = event.session_total - event.session_done
        if spent < self.minimum or event.session_done <= 0 or remaining <= 0:
            return ""
        seconds = spent * remaining / event.session_done
        said = f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.0f} min"
        return f", about {said} left"

    def _beat(self) -> None:
        while not self._ended.wait(self.heartbeat / 5):
            with self._lock:
                now = self.clock()
                stalled = now - self._moved
                quiet = now - self._last >= self.heartbeat
                if stalled < self.heartbeat or not quiet or self._ended.is_set():
                    continue
                text = f"{self._latest}, no new result for {stalled:.0f} s"
                if self.terminal:
                    self._redraw(text)
                else:
                    self._line(f"progress: {text}")

    def _redraw(self, text: str) -> None:
        self.stream.write(f"\r\033[K{text}")
        self.stream.flush()
        self._drawn = True
        self._last = self.clock()

    def _line(self, text: str) -> None:
        self.stream.write(text + "\n")
        self.stream.flush()
        self._last = self.clock()

    def finished(self, event: Finished) -> None:
        with self._lock:
            self._ended.set()
            if self._drawn:
                self.stream.write("\r\033[K")
                self.stream.flush()


class ReportWriter(Handler):
    """All reports into one directory when the session finishes (interrupted or not).

    The directory is claimed when the writer is made, before the session runs
    (`report_dir.ReportDirectory`): made absolute, created, written and locked. A run in
    which no implementation started (a typo in `--impl`) does not replace the reports of
    the previous run there; it says so.

    `inputs` gives a digest of everything the reports are made from, when the caller can
    tell it without rendering them (a matrix whose every entry is stored), or None: the
    reports are written with a stamp of it (`STAMP`: the digest, and each file's size and
    modification time). A run that judged nothing itself (`served`: a matrix served whole
    from its cache) and finds the same digest keeps them, as long as every file is as
    written. Rendering a matrix's reports takes over a minute; finding them current, none."""

    STAMP = ".conformance-inputs.json"

    def __init__(
        self,
        directory: Path,
        echo: Callable[..., None],
        *,
        inputs: Callable[[], str | None] = lambda: None,
        served: bool = False,
    ) -> None:
        self.claimed = ReportDirectory(directory)
        self.directory = self.claimed.path
        self.echo = echo
        self.inputs = inputs
        self.served = served

    def finished(self, event: Finished) -> None:
        names = [module.FILENAME for module in FORMATS]
        if never_started(event.run) and self.claimed.holds_any(names):
            self.release()
            self.echo(
                f"no implementation started, so the reports in {self.directory} are still "
                "those of the previous run (this one wrote none)",
                err=True,
            )
            return
        inputs = None if event.run.stopped else self.inputs()
        if self.served and inputs is not None and self._current(names, inputs):
            self.release()
            self.echo(
                f"kept the reports in {self.directory}: they are of these same results "
                f"(nothing they are made from changed since they were written; {self.STAMP})"
            )
            return
        try:
            stamp = self.directory / self.STAMP
            stamp.unlink(missing_ok=True)
            paths = write_reports(event.run, self.directory)
            if inputs is not None:
                files = {path.name: _fingerprint(path) for path in paths}
                stamp.write_text(json.dumps({"inputs": inputs, "files": files}), "utf-8")
        except OSError as error:
            raise cannot_write(self.directory, error) from None
        finally:
            self.release()
        for path in paths:
            self.echo(f"wrote {path}")

    def _current(self, names: Sequence[str], inputs: str) -> bool:
        """Whether the directory holds reports of these same inputs, each file as written."""
        try:
            stamp = json.loads((self.directory / self.STAMP).read_text("utf-8"))
            files = stamp["files"]
            return stamp["inputs"] == inputs and all(
                files[name] == _fingerprint(self.directory / name) for name in names
            )
        except (OSError, ValueError, KeyError, TypeError):
            return False

    def release(self) -> None:
        self.claimed.release()


def _fingerprint(path: Path) -> list[int]:
    """What tells a file from an edited or replaced one, without reading it."""
    status = path.stat()
    return [status.st_size, status.st_mtime_ns]


def summary_table(run: Run) -> str:
    shown = [v for v in Verdict if any(r.summary[v.value] for r in run.implementations)]
    not_run = any(impl.not_run for impl in run.implementations)
    # The model-family profile (SPEC.md 5.9) a run's options came from, when any has one.
    profiles = [impl.info.options.get("profile") or "" for impl in run.implementations]
    profiled = any(profiles)
    rows = []
    for impl, profile in zip(run.implementations, profiles, strict=True):
        if impl.failure:
            status = "cannot start"
        elif impl.not_run:
            status = "incomplete"
        elif impl.unjudged is not None:
            status = "UNJUDGED"
        else:
            status = "ok" if impl.ok else "FAILED"
        extra = [impl.not_run] if not_run else []
        rows.append(
            [
                impl.info.label,
                impl.info.version,
                *([profile] if profiled else []),
                *(impl.summary[v.value] for v in shown),
                *extra,
                status,
            ]
        )
    headers = [
        "implementation",
        "version",
        *(["profile"] if profiled else []),
        *(v.value for v in shown),
        *(["not run"] if not_run else []),
        "status",
    ]
    fuzz = [
        [
            impl.info.label,
            result.property,
            result.verdict.value,
            result.examples,
            f"{result.seconds:.1f} s",
        ]
        for impl in run.implementations
        for result in impl.fuzz
    ]
    parts = [tabulate(rows, headers=headers)]
    if fuzz:
        parts.append(
            tabulate(fuzz, headers=["implementation", "property", "verdict", "examples", "time"])
        )
    return "\n\n".join(parts) + f"\n({run.duration:.2f} s)"


def standard_handlers(report_dir: Path | None, echo: Callable[..., None]) -> list[Handler]:
    """Progress on standard error, the terminal summary, and the reports (unless None; the
    directory is claimed now, so a bad one ends the command before it runs anything)."""
    writers = [ReportWriter(report_dir, echo)] if report_dir is not None else []
    report = str(writers[0].directory / "report.md") if writers else ""
    return [ProgressDisplay(), TerminalSummary(echo, report), *writers]


def release(handlers: Sequence[Handler]) -> None:
    """Give up the report directories of `handlers` (a session that ended before finishing
    has not written its reports, so it has not released them either)."""
    for handler in handlers:
        if isinstance(handler, ReportWriter):
            handler.release()
