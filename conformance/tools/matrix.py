"""`conformance matrix`: the reference and every adapter whose library is installed, side by
side: the corpus with each adapter's expected failures, a behaviour fingerprint and speed.

    matrix = run_matrix(settings, echo=click.echo)

It writes the side-by-side reports; the command line renders the ecosystem page from the
returned matrix (ecosystem.py). With `update_expectations` it first runs without the
expectation files and rewrites them from the failures and adapters/divergences.yaml
(see `expectation_entries`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from conformance.adapters import ADAPTERS, EXPECTATIONS_DIR, Adapter
from conformance.contracts import all_checks
from conformance.corpus.cases import bundled_cases_dir, load_corpus
from conformance.corpus.expectations import load_expected_failures
from conformance.engine.plans import result_count
from conformance.engine.runner import run_implementation
from conformance.errors import UsageError
from conformance.model.options import Options
from conformance.model.results import (
    CHECKS,
    CaseResult,
    ImplementationRun,
    Run,
    Verdict,
)
from conformance.reports.bugclass import BY_NAME, classify
from conformance.session import (
    Context,
    Finished,
    Handler,
    Job,
    ReportWriter,
    Session,
    SessionSettings,
    TerminalSummary,
)
from conformance.tools.bench import BenchResult, BenchSettings, bench
from conformance.tools.fingerprint import Fingerprint, fingerprint
from conformance.transport.connections import Connection
from conformance.transport.impls import connect
from conformance.transport.spec import parse_impl

REFERENCE = "reference"
DIVERGENCES = Path(__file__).parent.parent / "adapters" / "divergences.yaml"
#: The matrix's default measurements: smaller than `conformance bench --quick`, because some
#: libraries take time quadratic in the stream (vLLM's `deepseek_r1` scans every earlier token
#: ID at each step) and the matrix measures a dozen of them in one go.
SMALL = BenchSettings(document_size=20_000, growth_sizes=(200_000, 2_000_000))
#: Verdicts that are failures of the library, whether expected or not.
FAILED = frozenset({Verdict.FAIL, Verdict.ERROR, Verdict.TIMEOUT, Verdict.XFAIL})


@dataclass(frozen=True, slots=True)
class MatrixSettings:
    report_dir: Path | None = Path("reports") / "matrix"
    expectations_dir: Path = EXPECTATIONS_DIR
    #: Adapter labels to run (the reference always runs); empty for all.
    only: Sequence[str] = ()
    bench: BenchSettings | None = SMALL
    timeout: float = 60.0
    update_expectations: bool = False


@dataclass(slots=True)
class Entry:
    """One implementation of the matrix."""

    run: ImplementationRun
    adapter: Adapter | None = None
    fingerprint: Fingerprint | None = None
    bench: BenchResult | None = None


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
    and speed on the same connection). With `update_expectations`, the expectation files are
    rewritten (and the results re-judged against them) before the summary and reports."""
    cases = load_corpus([bundled_cases_dir()]).cases
    targets: list[tuple[str, str, Adapter | None]] = [(REFERENCE, REFERENCE, None)]
    skipped: list[tuple[Adapter, str]] = []
    for candidate in selected_adapters(settings.only):
        reason = candidate.unavailable()
        if reason is None:
            targets.append((candidate.label, candidate.spec, candidate))
        else:
            echo(f"skipped {candidate.label}: {reason}", err=True)
            skipped.append((candidate, reason))
    total = result_count(cases, all_checks())
    entries: dict[str, Entry] = {}

    def job(label: str, spec: str, adapter: Adapter | None) -> Job:
        parsed = parse_impl(f"{label}={spec}")
        expected = None
        if adapter is not None and not settings.update_expectations:
            expected = load_expected_failures(settings.expectations_dir / f"{label}.yaml")

        def work(connection: Connection, context: Context) -> None:
            echo(f"{label}: running the corpus", err=True)
            entry = Entry(context.run, adapter)
            entries[label] = entry
            run_implementation(
                connection,
                cases,
                expected_failures=expected,
                on_result=context.emit,
                stop=context.stopping,
            )
            echo(f"{label}: fingerprint", err=True)
            entry.fingerprint = fingerprint(connection)
            if settings.bench is not None:
                entry.bench = bench(
                    connection, settings.bench, progress=lambda t: echo(t, err=True)
                )

        def opened() -> Connection:
            return connect(parsed, timeout=settings.timeout)

        return Job(parsed, total, work, opened)

    matrix = Matrix(Run("", "", "", []), [], skipped, settings.bench)

    class Collect(Handler):
        """Builds the matrix from the finished run, and updates the expectation files
        before the summary and reports see the results."""

        def finished(self, event: Finished) -> None:
            matrix.run = event.run
            matrix.entries = [
                entries.get(impl.info.label) or Entry(impl, adapter)
                for impl, (*_, adapter) in zip(event.run.implementations, targets, strict=True)
            ]
            for entry, impl in zip(matrix.entries, event.run.implementations, strict=True):
                entry.run = impl
            if settings.update_expectations:
                _update_expectations(matrix, settings.expectations_dir, echo)

    handlers: list[Handler] = [Collect(), TerminalSummary(echo)]
    if settings.report_dir is not None:
        handlers.append(ReportWriter(settings.report_dir, echo))
    session = Session(
        [job(*target) for target in targets],
        SessionSettings(selection={"matrix": [label for label, *_ in targets]}),
        handlers,
        echo=echo,
    )
    session.run()
    return matrix


# --- expectation files --------------------------------------------------------------------


def load_divergences(path: Path | None = None) -> dict[str, list[dict[str, Any]]]:
    """The rules of adapters/divergences.yaml (or `path`), label -> rules in order."""
    path = path or DIVERGENCES
    rules = yaml.safe_load(path.read_text("utf-8")) or {}
    for label, entries in rules.items():
        for rule in entries:
            if rule.get("class") not in BY_NAME or not rule.get("reason"):
                raise UsageError(
                    f"{path}: {label}: a rule needs a known `class` "
                    f"({', '.join(BY_NAME)}) and a `reason`, not {rule!r}"
                )
    return rules


def expectation_entries(
    results: Sequence[CaseResult], options: Mapping[str, Any], rules: Sequence[Mapping[str, Any]]
) -> tuple[dict[str, dict[str, Any]], list[CaseResult]]:
    """Expectation-file entries for an implementation's failures, and the failures no rule
    explains. A case failing several checks gets one entry listing them; its reason is the
    reason of each distinct rule that matched, in check order."""
    grammar = Options.from_mapping(options).grammar
    matched: dict[str, list[tuple[CaseResult, Mapping[str, Any]]]] = {}
    unexplained = []
    for result in results:
        if result.verdict not in FAILED:
            continue
        bug = classify(result, grammar).name
        rule = next(
            (
                r
                for r in rules
                if r["class"] == bug and ("checks" not in r or result.check in r["checks"])
            ),
            None,
        )
        if rule is None:
            unexplained.append(result)
        else:
            matched.setdefault(result.case, []).append((result, rule))
    entries = {}
    for case in sorted(matched):
        pairs = sorted(matched[case], key=lambda pair: all_checks().index(pair[0].check))
        reasons = list(dict.fromkeys(" ".join(rule["reason"].split()) for _, rule in pairs))
        link = next((rule["link"] for _, rule in pairs if rule.get("link")), None)
        entry: dict[str, Any] = {"reason": "; ".join(reasons)}
        if link:
            entry["link"] = link
        checks = [result.check for result, _ in pairs]
        if checks != list(CHECKS):
            entry["checks"] = checks
        entries[case] = entry
    return entries, unexplained


def _update_expectations(matrix: Matrix, directory: Path, echo: Callable[..., None]) -> None:
    rules = load_divergences()
    directory.mkdir(parents=True, exist_ok=True)
    for entry in matrix.entries:
        if entry.adapter is None or entry.run.failure is not None:
            continue
        label = entry.run.info.label
        entries, unexplained = expectation_entries(
            entry.run.results, entry.run.info.options, rules.get(label, [])
        )
        path = directory / f"{label}.yaml"
        header = (
            f"# Known divergences of {entry.run.info.name} {entry.run.info.version} "
            "(adapters/divergences.yaml says why).\n"
            "# Written by `conformance matrix --update-expectations`; review the diff.\n"
        )
        body = yaml.safe_dump(entries, sort_keys=False, allow_unicode=True, width=100)
        path.write_text(header + (body if entries else ""), "utf-8")
        echo(f"wrote {path} ({len(entries)} cases)")
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
