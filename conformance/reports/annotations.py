"""GitHub Actions annotations for a run: one `::error` line per bug signature of each
implementation (its smallest failing input and the command that reruns it, in the order of
the terminal's list), per implementation that could not run, and per
fuzzing property that failed. GitHub shows a handful of annotations per step, so they are
few and most severe first; report.md has the rest.

    python -m conformance.reports.annotations reports/run/results.json
"""

from __future__ import annotations

import sys
from pathlib import Path

from conformance.model.results import Run, Verdict

from ._rerun import rerun_command
from ._triage import triage
from ._visible import one_line

__all__ = ["main", "render"]

#: Annotations per run; GitHub shows at most 10 errors of one step.
MAX_ANNOTATIONS = 10


def render(run: Run, *, limit: int = MAX_ANNOTATIONS) -> str:
    lines = []
    for implementation in run.implementations:
        label = implementation.info.label
        if implementation.failure is not None:
            lines.append(_error(f"{label}: could not run", implementation.failure))
        for group in triage(implementation):
            example = group.example
            message = (
                f"in {group.where}: {group.counts}; smallest:"
                f" {example.case} {example.slug} [{example.check}]: {example.reason}"
                f" · rerun: {rerun_command(implementation.info, example)}"
            )
            lines.append(_error(f"{label}: {group.bug.name} ({group.level})", message))
        for result in implementation.fuzz:
            if result.verdict in (Verdict.FAIL, Verdict.ERROR):
                title = f"{label}: fuzzing property {result.property}"
                lines.append(_error(title, result.reason or result.verdict.value))
    if len(lines) > limit:
        lines = [*lines[: limit - 1], _error("more failures", f"{len(lines) - limit + 1} more")]
    return "".join(line + "\n" for line in lines)


def _error(title: str, message: str) -> str:
    return f"::error title={_property(title)}::{_data(one_line(message, 800))}"


def _data(value: str) -> str:
    """A workflow command's message: `%`, CR and LF escaped (GitHub's encoding)."""
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(value: str) -> str:
    """A workflow command's property value: also `:` and `,`, which end it otherwise."""
    return _data(value).replace(":", "%3A").replace(",", "%2C")


def main(argv: list[str]) -> int:
    from . import load_results

    if len(argv) != 1:
        print("usage: python -m conformance.reports.annotations RESULTS_JSON", file=sys.stderr)
        return 2
    sys.stdout.write(render(load_results(Path(argv[0]))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
