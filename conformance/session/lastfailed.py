"""What failed in the last run, per implementation, for `conformance run --last-failed`.

The record is `.lastfailed.json` in the report directory, beside the reports it summarises:
for each implementation label, the (case ID, check) pairs whose last result failed (a verdict
that is not `ok`: FAIL, ERROR, TIMEOUT, XPASS). Each run updates the labels it ran, as
pytest's cache does: a pair it judged leaves the record unless it failed again, a failing
pair enters it, and pairs it did not run (another selection, a stopped run) stay as they
were. Labels a run did not have, or that could not start, are left alone, so runs of
different implementations into one directory keep each other's records.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Iterable
from pathlib import Path

from conformance.model.results import CaseResult, Run
from conformance.session.events import Finished, Handler

LAST_FAILED_NAME = ".lastfailed.json"

#: A (case ID, check) pair, as results name them.
Key = tuple[str, str]


def last_failed_path(report_dir: Path) -> Path:
    return Path(report_dir).absolute() / LAST_FAILED_NAME


def load_last_failed(path: Path) -> dict[str, set[Key]]:
    """The recorded failures per label; nothing for a missing or unreadable record (it is a
    cache: losing it means running everything, never failing the command)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        labels = data["implementations"]
        return {
            str(label): {(str(case), str(check)) for case, check in pairs}
            for label, pairs in labels.items()
        }
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


def updated(previous: dict[str, set[Key]], run: Run) -> dict[str, set[Key]]:
    """`previous` after `run`: each label the run judged anything for, updated by its
    results."""
    record = {label: set(keys) for label, keys in previous.items()}
    for impl in run.implementations:
        if impl.failure is not None:
            continue
        judged = {_key(result) for result in impl.results}
        failed = {_key(result) for result in impl.results if not result.verdict.ok}
        keys = (record.get(impl.info.label, set()) - judged) | failed
        if keys:
            record[impl.info.label] = keys
        else:
            record.pop(impl.info.label, None)
    return record


def _key(result: CaseResult) -> Key:
    return (result.case, result.check)


def save_last_failed(path: Path, record: dict[str, set[Key]]) -> None:
    data = {
        "version": 1,
        "implementations": {
            label: [list(key) for key in sorted(keys)] for label, keys in sorted(record.items())
        },
    }
    temporary = path.with_name(path.name + ".tmp")
    with contextlib.suppress(OSError):  # a cache that cannot be written is no error
        temporary.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        os.replace(temporary, path)


class LastFailedRecorder(Handler):
    """Updates the record when the session finishes."""

    def __init__(self, report_dir: Path) -> None:
        self.path = last_failed_path(report_dir)

    def finished(self, event: Finished) -> None:
        save_last_failed(self.path, updated(load_last_failed(self.path), event.run))


def last_failed_filter(keys: Iterable[Key]) -> Callable[[str, str], bool]:
    """Whether a (case ID, check) pair is among `keys`."""
    wanted = frozenset(keys)
    return lambda case, check: (case, check) in wanted


def rerun_filter(
    label: str,
    keys: set[Key],
    count: Callable[[Callable[[str, str], bool] | None], int],
    echo: Callable[..., None],
) -> Callable[[str, str], bool] | None:
    """`--last-failed` for one implementation: the filter of the pairs to rerun, or None to
    run the whole selection when none of them is in it (nothing recorded, nothing failed,
    or only failures the selection leaves out), as pytest's `--lf` does. `count` says how
    many results a filter gives (None: the whole selection). Says which, on stderr."""
    selected = count(None)
    wanted = last_failed_filter(keys)
    rerun = count(wanted) if keys else 0
    if rerun:
        echo(
            f"--last-failed: {label}: rerunning {_checks(rerun)} that failed last time "
            f"(of {selected} selected)",
            err=True,
        )
        return wanted
    why = (
        f"none of {_checks(len(keys))} that failed last time is selected"
        if keys
        else "no failure recorded by the last run"
    )
    echo(f"--last-failed: {label}: {why}; running all {selected} checks", err=True)
    return None


def _checks(count: int) -> str:
    return f"the {count} check" if count == 1 else f"the {count} checks"
