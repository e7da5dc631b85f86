"""`conformance matrix`: the reference and every adapter whose library is installed, side by
side: the corpus with each adapter's expected failures, a behaviour fingerprint and speed.

    matrix = run_matrix(settings, echo=click.echo)

It writes the side-by-side reports; the command line renders the ecosystem page from the
returned matrix (ecosystem.py). With `update_expectations` it first runs without the
expectation files and writes them as locks (corpus/expectations.py) from the failures and the
rules of adapters/divergences.yaml (see `lock_failures`): into the checkout's
adapters/expectations when this package runs from a checkout, never into an installed
package (then into `expectations_out`, by default the report directory's `expectations/`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from conformance._version import __version__
from conformance.adapters import ADAPTERS, EXPECTATIONS_DIR
from conformance.adapters.adapter import Adapter
from conformance.contracts import all_checks
from conformance.corpus.cases import bundled_cases_dir, load_corpus
from conformance.corpus.expectations import (
    ExpectedFailures,
    load_expected_failures,
    render_lock,
)
from conformance.engine.plans import result_count
from conformance.errors import UsageError
from conformance.model.options import Options
from conformance.model.results import CaseResult, Run, Verdict
from conformance.reports._bugclass import BY_NAME, classify
from conformance.session.events import Finished, Handler
from conformance.session.handlers import ReportWriter, TerminalSummary
from conformance.session.orchestrator import Opened, Session, SessionSettings
from conformance.tools.bench import QUICK, BenchSettings
from conformance.tools.matrix_jobs import Entry, Plan, Served, complete, job
from conformance.tools.matrix_keys import digest, file_digest, reports_digest
from conformance.tools.matrix_progress import MatrixProgress
from conformance.tools.matrix_store import Stored, bench_key, results_path, write
from conformance.tools.matrix_targets import (
    Target,
    cached_targets,
    merged_targets,
    not_merged,
)
from conformance.tools.matrix_worker import WorkerPool

DIVERGENCES = Path(__file__).parent.parent / "adapters" / "divergences.yaml"
#: `--bench small`: `conformance bench`'s default document (1 MB) and `--quick`'s growth
#: sizes. Some libraries take time quadratic in the stream (vLLM's `deepseek_r1` scans every
#: earlier token ID at each step): at 1 MB in 1-character chunks that is hours, so an
#: implementation that the growth check (engine/growth.py) finds superlinear is not benched,
#: and the page says why. The default is `--quick` (QUICK, 100 KB): with superlinear costs
#: found by the growth check first, a longer document only measures the same per-chunk cost
#: ten times over (minutes for a slow library in 1-character chunks, three times each).
SMALL = BenchSettings(growth_sizes=(200_000, 2_000_000))
#: Verdicts that are failures of the library, whether expected or not.
FAILED = frozenset({Verdict.FAIL, Verdict.ERROR, Verdict.TIMEOUT, Verdict.XFAIL})


@dataclass(frozen=True, slots=True)
class MatrixSettings:
    report_dir: Path | None = Path("reports") / "matrix"
    expectations_dir: Path = EXPECTATIONS_DIR
    #: Adapter labels to run (the reference always runs); empty for all.
    only: Sequence[str] = ()
    bench: BenchSettings | None = QUICK
    timeout: float = 60.0
    update_expectations: bool = False
    #: Where `update_expectations` writes; None for `expectations_target`'s choice.
    expectations_out: Path | None = None
    #: Implementations run at once, each in a worker process when more than one.
    jobs: int = 1
    #: Where entries are cached (matrix_store.py); None for no cache.
    cache_dir: Path | None = None
    #: Also write each implementation's entry here, for `merge` (one CI job's part).
    results_out: Path | None = None
    #: Results directories to merge into one matrix instead of running anything.
    merge: Sequence[Path] = ()


@dataclass(slots=True)
class Matrix:
    run: Run
    entries: list[Entry]
    #: Adapters that could not run here, and why.
    skipped: list[tuple[Adapter, str]] = field(default_factory=list)
    bench_settings: BenchSettings | None = None
    #: Failures no rule of divergences.yaml explains (only with update_expectations).
    unexplained: dict[str, list[CaseResult]] = field(default_factory=dict)


def selected_adapters(only: Sequence[str]) -> list[Adapter]:
    unknown = sorted(set(only) - {a.label for a in ADAPTERS})
    if unknown:
        labels = ", ".join(a.label for a in ADAPTERS)
        raise UsageError(f"--adapter {unknown[0]}: no such adapter (the adapters: {labels})")
    return [a for a in ADAPTERS if not only or a.label in only]


def run_matrix(settings: MatrixSettings, *, echo: Callable[..., None]) -> Matrix:
    """The matrix as a session: one job per implementation (the corpus, then a fingerprint
    and speed on the same connection), `settings.jobs` at a time, each served from the cache
    when nothing it depends on changed (matrix_keys.py), or from the results directories of
    `settings.merge`. With `update_expectations`, the expectation files are rewritten (and
    the results re-judged against them) before the summary and reports."""
    lock_dir = expectations_target(settings) if settings.update_expectations else None
    cases = load_corpus([bundled_cases_dir()]).cases
    adapters = selected_adapters(settings.only)
    if settings.merge:
        stored, targets = merged_targets(settings.merge, settings.bench, adapters)
    else:
        stored, targets = cached_targets(cases, adapters, settings.timeout, settings.cache_dir)
    skipped: dict[str, str] = {}
    for label, _, _ in targets:
        reason = stored[label].skipped
        if reason is not None:
            echo(f"skipped {label}: {reason}", err=True)
            skipped[label] = reason
            if settings.results_out is not None:
                write(results_path(settings.results_out, label), stored[label])
    total = result_count(cases, all_checks())
    entries: dict[str, Entry] = {}
    progress = MatrixProgress(settings.jobs)
    workers = WorkerPool(cases) if settings.jobs > 1 else None
    plan = Plan(
        cases,
        settings.timeout,
        settings.bench,
        workers,
        None if settings.merge else settings.cache_dir,
        settings.results_out,
        entries,
        progress.phase,
    )

    def recount(connection: Opened) -> int:
        if isinstance(connection, Served):  # its results are all stored
            return len(stored[connection.info.label].results)
        # Under the options it declares, derived cases stand in for written ones.
        options = Options.from_mapping(connection.info.options)
        return result_count(cases, all_checks(), options)

    def expected(adapter: Adapter | None) -> ExpectedFailures | None:
        if adapter is None or settings.update_expectations:
            return None
        return load_expected_failures(settings.expectations_dir / f"{adapter.label}.yaml")

    jobs = [
        job(plan, stored[label], adapter, expected(adapter), total, recount)
        for label, _, adapter in targets
        if label not in skipped
    ]
    served = {label: complete(stored[label], settings.bench) for label, *_ in targets}
    progress.expect(served, {each.spec.label: each.cost for each in jobs})
    matrix = Matrix(Run("", "", "", []), [], [], settings.bench)

    class Collect(Handler):
        """Builds the matrix from the finished run, and updates the expectation files
        before the summary and reports see the results."""

        def finished(self, event: Finished) -> None:
            matrix.run = event.run
            by_label = {label: adapter for label, _, adapter in targets}
            matrix.entries = []
            for impl in event.run.implementations:
                label = impl.info.label
                entry = entries.get(label) or Entry(impl, by_label.get(label))
                entry.run = impl
                if entry.fingerprint is not None:
                    # In the results documents too, so the store and the site have it.
                    impl.fingerprint = entry.fingerprint.findings()
                matrix.entries.append(entry)
            reasons = {**skipped, **plan.skipped}
            matrix.skipped = [
                (adapter, reasons[label])
                for label, _, adapter in targets
                if adapter is not None and label in reasons
            ]
            if settings.merge:
                matrix.skipped += not_merged(stored, adapters)
            if lock_dir is not None:
                _update_expectations(matrix, lock_dir, echo)

    handlers: list[Handler] = [Collect(), progress, TerminalSummary(echo)]
    if settings.report_dir is not None:
        handlers.append(
            ReportWriter(
                settings.report_dir,
                echo,
                # Known once every entry is stored: at the end of a run that judged some.
                inputs=lambda: report_inputs(settings, stored, targets),
                served=all(served.values()),
            )
        )
    session = Session(
        jobs,
        SessionSettings(selection={"matrix": [label for label, *_ in targets]}, jobs=settings.jobs),
        handlers,
        echo=echo,
    )
    try:
        session.run()
    finally:
        if workers is not None:
            workers.close()
    return matrix


def report_inputs(
    settings: MatrixSettings, stored: Mapping[str, Stored], targets: Sequence[Target]
) -> str | None:
    """What the reports are made of, once every implementation's entry is stored whole (so
    that reports already written from the same are kept, ReportWriter): each entry's key, the
    expectation files applied to them, the benchmark setting and the report writers. None
    while one is not (it failed, or was stopped), or when the locks are being rewritten."""
    if settings.update_expectations or not all(
        complete(stored[label], settings.bench) for label, *_ in targets
    ):
        return None
    return digest(
        {
            "version": __version__,
            "entries": [[label, stored[label].key, stored[label].skipped] for label, *_ in targets],
            "expectations": {
                label: file_digest(settings.expectations_dir / f"{label}.yaml")
                for label, _, adapter in targets
                if adapter is not None
            },
            "bench": bench_key(settings.bench),
            "reports": reports_digest(),
        }
    )


# --- expectation files --------------------------------------------------------------------


def load_divergences(path: Path | None = None) -> dict[str, list[dict[str, Any]]]:
    """The rules of adapters/divergences.yaml (or `path`), label -> rules in order. Each rule
    has a stable `id` (unique for its adapter), a bug `class` (or a list of classes: one
    behaviour can show as several), a `reason` and usually a `link`; `checks` narrows it to
    some checks."""
    path = path or DIVERGENCES
    rules = yaml.safe_load(path.read_text("utf-8")) or {}
    for label, entries in rules.items():
        seen: set[str] = set()
        for rule in entries:
            classes = rule_classes(rule)
            if (
                not classes
                or any(name not in BY_NAME for name in classes)
                or not rule.get("reason")
                or not rule.get("id")
            ):
                raise UsageError(
                    f"{path}: {label}: a rule needs an `id`, a known `class` or a list of them "
                    f"({', '.join(BY_NAME)}) and a `reason`, not {rule!r}"
                )
            if rule["id"] in seen:
                raise UsageError(f"{path}: {label}: two rules have the id {rule['id']!r}")
            seen.add(rule["id"])
    return rules


def rule_classes(rule: Mapping[str, Any]) -> list[str]:
    """The bug classes a rule explains: its `class`, one name or a list of names."""
    named = rule.get("class")
    if isinstance(named, str):
        return [named]
    if isinstance(named, list) and all(isinstance(name, str) for name in named):
        return list(named)
    return []


def lock_failures(
    results: Sequence[CaseResult], options: Mapping[str, Any], rules: Sequence[Mapping[str, Any]]
) -> tuple[dict[str, dict[str, list[str]]], list[CaseResult]]:
    """An implementation's failures by rule: rule id -> case ID -> failing checks (in check
    order), each failing check under the first rule matching its bug class (and check, when
    the rule names checks); and the failures no rule explains."""
    grammar = Options.from_mapping(options).grammar
    failing: dict[str, dict[str, list[str]]] = {}
    unexplained = []
    for result in results:
        if result.verdict not in FAILED:
            continue
        bug = classify(result, grammar).name
        rule = next(
            (
                r
                for r in rules
                if bug in rule_classes(r) and ("checks" not in r or result.check in r["checks"])
            ),
            None,
        )
        if rule is None:
            unexplained.append(result)
        else:
            failing.setdefault(rule["id"], {}).setdefault(result.case, []).append(result.check)
    for cases in failing.values():
        for checks in cases.values():
            checks.sort(key=all_checks().index)
    return failing, unexplained


def expectations_target(settings: MatrixSettings) -> Path:
    """Where `--update-expectations` writes: the directory asked for; else the checkout's
    adapters/expectations when this package runs from a source checkout; else the report
    directory's `expectations/` (an installed package is never written into)."""
    if settings.expectations_out is not None:
        return settings.expectations_out
    if from_checkout():
        return EXPECTATIONS_DIR
    if settings.report_dir is None:
        raise UsageError(
            "conformance is installed, not run from a checkout: give --expectations-out "
            "(the installed package is never written into)"
        )
    return settings.report_dir / "expectations"


def from_checkout() -> bool:
    """Whether the package is a source checkout's (a pyproject.toml and a .git beside it),
    not an installed copy."""
    root = EXPECTATIONS_DIR.parents[2]
    installed = "site-packages" in root.parts or "dist-packages" in root.parts
    return not installed and (root / "pyproject.toml").exists() and (root / ".git").exists()


def _update_expectations(matrix: Matrix, directory: Path, echo: Callable[..., None]) -> None:
    rules = load_divergences()
    directory.mkdir(parents=True, exist_ok=True)
    for entry in matrix.entries:
        if entry.adapter is None or entry.run.failure is not None:
            continue
        label = entry.run.info.label
        own = rules.get(label, [])
        failing, unexplained = lock_failures(entry.run.results, entry.run.info.options, own)
        path = directory / f"{label}.yaml"
        header = (
            f"# Known divergences of {entry.run.info.name} {entry.run.info.version}, by rule of "
            "adapters/divergences.yaml.\n"
            "# Written by `conformance matrix --update-expectations`; review the diff.\n"
        )
        described = {rule["id"]: rule for rule in own}
        path.write_text(render_lock(header, described, failing), "utf-8")
        checks = sum(len(c) for cases in failing.values() for c in cases.values())
        echo(f"wrote {path} ({len(failing)} rules, {checks} checks)")
        if unexplained:
            matrix.unexplained[label] = unexplained
            classes = sorted({classify(r, _grammar(entry)).name for r in unexplained})
            echo(
                f"{label}: {len(unexplained)} failing checks have no rule in {DIVERGENCES.name} "
                f"(bug classes: {', '.join(classes)}); they stay FAIL",
                err=True,
            )
        expected = load_expected_failures(path)
        entry.run.results = [expected.apply(result) for result in entry.run.results]


def _grammar(entry: Entry) -> Any:
    return Options.from_mapping(entry.run.info.options).grammar
