"""What several reports need from a run: verdict order, declared options, cases as rows,
fuzzing results in reading order and the command that replays them."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from conformance.model.cases import written_id
from conformance.model.options import DEFAULT, Options, OptionsError
from conformance.model.results import (
    SEVERITY,
    CaseResult,
    FuzzResult,
    ImplementationRun,
    Run,
    Verdict,
    worst,
)

#: Column order of verdict counts: the enum's order, PASS first.
VERDICTS = tuple(Verdict)


def option_differences(options: Mapping[str, Any]) -> dict[str, Any]:
    """The declared options as `--options` would give them: the model-family profile they
    came from (SPEC.md 5.9) and the values that differ from its own, or without a profile
    the values that differ from the spec's default."""
    try:
        resolved = Options.from_mapping(options)
    except OptionsError:
        # An implementation may declare options this harness does not know: show them as
        # declared rather than hide them.
        default = DEFAULT.to_json()
        return {name: value for name, value in options.items() if default.get(name) != value}
    return resolved.given()


def format_options(options: Mapping[str, Any]) -> str:
    differences = option_differences(options)
    if not differences:
        return "default"
    return ", ".join(f"{name}={option_value(value)}" for name, value in differences.items())


def option_value(value: Any) -> str:
    """An option value as a reader would write it: JSON, delimiter pairs as `open…close`."""
    if isinstance(value, list) and all(isinstance(v, Mapping) for v in value):
        return " ".join(f"{pair.get('open')}…{pair.get('close')}" for pair in value)
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


@dataclass(slots=True)
class CaseRow:
    """One case across implementations: its results per implementation label."""

    case: str
    slug: str
    title: str
    category: str
    taxonomy: str
    level: str
    results: dict[str, list[CaseResult]] = field(default_factory=dict)

    def verdict(self, label: str) -> Verdict | None:
        """The worst verdict of the case's checks on one implementation, None if not run."""
        results = self.results.get(label)
        return worst(r.verdict for r in results) if results else None

    @property
    def clean(self) -> bool:
        """Every check of every implementation passed or was skipped."""
        fine = (Verdict.PASS, Verdict.SKIP)
        return all(r.verdict in fine for results in self.results.values() for r in results)

    def vector(self, label: str) -> tuple[tuple[str, str], ...]:
        return tuple((r.check, r.verdict.value) for r in self.results.get(label, ()))


def case_rows(run: Run, *, forms_together: bool = False) -> dict[str, list[CaseRow]]:
    """Cases grouped by category, both in the order the run first met them. With
    `forms_together`, a written case and the forms derived from it are one row (each
    implementation's results on whichever forms it ran), named after the written case."""
    rows: dict[str, CaseRow] = {}
    for implementation in run.implementations:
        label = implementation.info.label
        for result in implementation.results:
            key = written_id(result.case) if forms_together else result.case
            row = rows.get(key)
            if row is None:
                row = rows[key] = CaseRow(
                    key,
                    result.slug,
                    result.title,
                    result.category,
                    result.taxonomy,
                    result.level,
                )
            if result.case == key and row.title != result.title:
                # The written form's slug and title name the row, not a derivation's.
                row.slug, row.title = result.slug, result.title or row.title
            row.title = row.title or result.title
            row.results.setdefault(label, []).append(result)
    grouped: dict[str, list[CaseRow]] = {}
    for row in rows.values():
        grouped.setdefault(row.category, []).append(row)
    return grouped


def category_counts(rows: Sequence[CaseRow], label: str) -> tuple[int, int]:
    """(cases passed, cases run) of one category on one implementation: a case passes when
    every check is PASS or NON_STRICT; one whose checks were all skipped does not count."""
    passed = total = 0
    for row in rows:
        verdicts = {r.verdict for r in row.results.get(label, ())}
        if not verdicts or verdicts == {Verdict.SKIP}:
            continue
        total += 1
        passed += verdicts <= {Verdict.PASS, Verdict.NON_STRICT, Verdict.SKIP}
    return passed, total


def header_line(run: Run) -> str:
    """Harness and spec version, when and how long, as one line of plain text."""
    line = (
        f"harness {run.harness_version} · spec {run.spec_version} · started {run.started}"
        f" · {run.duration:.1f} s"
    )
    # A run that stopped early or had run-level problems must say so first: its counts alone
    # would read as a clean bill of health.
    not_run = sum(impl.not_run for impl in run.implementations)
    if run.stopped:
        line += f" · INCOMPLETE: {run.stopped}; {not_run} selected checks not run"
    for problem in run.problems:
        line += f" · PROBLEM: {problem}"
    return line


def format_selection(selection: Mapping[str, Any]) -> str:
    parts = []
    for name, value in selection.items():
        if value in (None, "", [], {}, ()):
            continue
        if isinstance(value, Mapping):
            # A fuzz run's selection is one group of settings: `fuzz (seed: 7; ...)`.
            parts.append(f"{name} ({format_selection(value)})")
            continue
        if isinstance(value, list | tuple):
            value = ", ".join(str(v) for v in value)
        parts.append(f"{name}: {value}")
    return "; ".join(parts) or "all cases"


# --- fuzzing ---------------------------------------------------------------------------------

#: Fuzzing properties whose counterexample a report shows, in this order: what breaks the
#: run first, then the whitespace-only differences.
FUZZ_PROBLEMS = (Verdict.FAIL, Verdict.ERROR, Verdict.TIMEOUT, Verdict.NON_STRICT)
#: What to do with the case file the fuzzer wrote for a counterexample.
CASE_FILE_HINT = "review it, then move it into cases/ to keep it"


#: What the two sides of a counterexample's channels are, where they are not the reference's
#: expectation and the implementation's answer: these properties compare two answers.
_SIDES = {
    "chunking": ("one chunking", "another chunking"),
    "whole": ("stream", "whole form"),
    "idempotence": ("answer", "answer normalized again"),
}


def diff_sides(prop: str) -> tuple[str, str]:
    """Names of the `expected` and `actual` channels of a property's counterexample."""
    return _SIDES.get(prop, ("expected", "actual"))


def start_times(run: Run) -> str:
    """How long each implementation took to start, `label 1.23 s` joined by `; `, or "" when
    none was started in this run. A start near --start-timeout says why one could not."""
    return "; ".join(
        f"{impl.info.label} {impl.start_seconds:.2f} s"
        for impl in run.implementations
        if impl.start_seconds is not None
    )


def has_cases(run: Run) -> bool:
    return any(implementation.results for implementation in run.implementations)


def has_fuzz(run: Run) -> bool:
    return any(implementation.fuzz for implementation in run.implementations)


def fuzz_problems(run: Run) -> list[tuple[ImplementationRun, FuzzResult]]:
    """Every property that did not simply pass, failures first, then implementation order."""
    found = [
        (implementation, result)
        for implementation in run.implementations
        for result in implementation.fuzz
        if result.verdict in FUZZ_PROBLEMS
    ]
    return sorted(found, key=lambda pair: FUZZ_PROBLEMS.index(pair[1].verdict))


def fuzz_rate(result: FuzzResult) -> str:
    """Examples per second, as a whole number; a dash when the property took no time."""
    return f"{result.examples / result.seconds:.0f}" if result.seconds > 0 else "-"


def fuzz_counts(implementation: ImplementationRun) -> str:
    """The verdicts of an implementation's properties, worst first: `1 FAIL, 5 PASS`."""
    counts = {v: sum(r.verdict is v for r in implementation.fuzz) for v in SEVERITY}
    return ", ".join(f"{n} {v.value}" for v, n in counts.items() if n)


def fuzz_selection(run: Run) -> Mapping[str, Any]:
    """The settings `conformance fuzz` records in the run's selection, if it does."""
    session = run.selection.get("fuzz")
    return session if isinstance(session, Mapping) else {}


def session_seed(run: Run, implementation: ImplementationRun) -> int:
    """The seed a fuzzing session started from (properties on a time budget each move on
    from it, and record the seed of the slice that failed)."""
    seed = fuzz_selection(run).get("seed")
    if isinstance(seed, int):
        return seed
    return min((r.seed for r in implementation.fuzz), default=0)
