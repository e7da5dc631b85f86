"""One `conformance run`: corpus -> selection -> each implementation -> reports -> exit status."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tabulate import tabulate

from conformance.corpus.cases import load_corpus
from conformance.corpus.expectations import expected_failures_for
from conformance.corpus.select import Selection
from conformance.engine.runner import new_run, run_implementation
from conformance.errors import ImplementationStartError, UsageError
from conformance.model.results import (
    CaseResult,
    ImplementationInfo,
    ImplementationRun,
    Run,
    Verdict,
)
from conformance.transport.connections import Connection
from conformance.transport.impls import connect
from conformance.transport.spec import ImplementationSpec, parse_impl, parse_options

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


@dataclass(frozen=True, slots=True)
class RunSettings:
    impls: Sequence[str]
    option_sets: Sequence[str]
    case_dirs: Sequence[Path]
    selection: Selection
    report_dir: Path | None
    expectations_dir: Path | None
    timeout: float
    validate_protocol: bool


def implementation_specs(
    impls: Sequence[str], option_sets: Sequence[str]
) -> list[ImplementationSpec]:
    """Pair each `--impl` with its `--options` (`NAME=JSON` for one, bare JSON for all)."""
    shared: dict[str, object] = {}
    named: dict[str, dict[str, object]] = {}
    for text in option_sets:
        head, sep, tail = text.partition("=")
        if sep and not head.lstrip().startswith("{"):
            named[head] = parse_options(tail)
        else:
            shared.update(parse_options(text))
    specs = [parse_impl(text) for text in impls]
    labels = [spec.label for spec in specs]
    duplicates = sorted({label for label in labels if labels.count(label) > 1})
    if duplicates:
        raise UsageError(
            f"two implementations are labelled {duplicates[0]!r}; name them with --impl NAME=SPEC"
        )
    unknown = sorted(set(named) - set(labels))
    if unknown:
        raise UsageError(
            f"--options {unknown[0]}=...: no implementation is labelled "
            f"{unknown[0]!r} (labels: {', '.join(labels)})"
        )
    return [
        ImplementationSpec(spec.label, spec.spec, {**shared, **named.get(spec.label, {})} or None)
        for spec in specs
    ]


def open_connection(
    spec: ImplementationSpec,
    *,
    timeout: float,
    validate_protocol: bool,
    echo: Callable[..., None],
) -> Connection | ImplementationRun:
    """A live connection, or, when the implementation cannot start, its failed run."""
    try:
        return connect(spec, timeout=timeout, validate_protocol=validate_protocol)
    except ImplementationStartError as error:
        echo(f"error: {error}", err=True)
        info = ImplementationInfo(
            spec.label, spec.label, "unknown", "unknown", dict(spec.options or {}), spec.spec
        )
        return ImplementationRun(info, failure=str(error))


def finish(
    runs: list[ImplementationRun],
    selection: Mapping[str, Any],
    started: float,
    report_dir: Path | None,
    echo: Callable[..., None],
) -> Run:
    """The run's summary on the terminal and its reports on disk."""
    run = new_run(runs, dict(selection))
    run.duration = time.perf_counter() - started
    echo(summary_table(run))
    written = []
    if report_dir is not None:
        from conformance.reports import write_reports

        for path in write_reports(run, report_dir):
            echo(f"wrote {path}")
            written.append(path)
    from conformance.reports.terminal import render_top

    # What to fix first, a few lines per bug class, after the counts.
    report = next((str(path) for path in written if path.suffix == ".md"), "")
    top = render_top(run, report=report)
    if top:
        echo(top.rstrip("\n"))
    return run


def exit_status(run: Run, *, usage_problems: bool) -> int:
    if usage_problems or any(impl.failure for impl in run.implementations):
        return EXIT_USAGE
    return EXIT_OK if run.ok else EXIT_FAILED


def execute(
    settings: RunSettings,
    *,
    echo: Callable[..., None],
    progress: Callable[[str], None] | None = None,
) -> int:
    started = time.perf_counter()
    specs = implementation_specs(settings.impls, settings.option_sets)
    corpus = load_corpus(settings.case_dirs)
    cases = settings.selection.apply(corpus.cases)
    runs: list[ImplementationRun] = []
    for spec in specs:
        expected = expected_failures_for(settings.expectations_dir, spec.label)
        connection = open_connection(
            spec, timeout=settings.timeout, validate_protocol=settings.validate_protocol, echo=echo
        )
        if isinstance(connection, ImplementationRun):
            runs.append(connection)
            continue
        total = len(cases) * len(settings.selection.checks)
        done = 0

        def tick(result: CaseResult, label: str = spec.label, total: int = total) -> None:
            nonlocal done
            done += 1
            if progress is not None and (done % 50 == 0 or done == total):
                progress(f"{label}: {done}/{total} checks")

        try:
            runs.append(
                run_implementation(
                    connection,
                    cases,
                    checks=settings.selection.checks,
                    expected_failures=expected,
                    on_result=tick,
                )
            )
        finally:
            connection.close()
        if progress is not None:
            progress("")
    for problem in corpus.errors:
        echo(str(problem), err=True)
    run = finish(runs, settings.selection.to_json(), started, settings.report_dir, echo)
    return exit_status(run, usage_problems=bool(corpus.errors))


def summary_table(run: Run) -> str:
    shown = [v for v in Verdict if any(r.summary[v.value] for r in run.implementations)]
    rows = []
    for impl in run.implementations:
        status = "cannot start" if impl.failure else ("ok" if impl.ok else "FAILED")
        rows.append(
            [impl.info.label, impl.info.version, *(impl.summary[v.value] for v in shown), status]
        )
    headers = ["implementation", "version", *(v.value for v in shown), "status"]
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
