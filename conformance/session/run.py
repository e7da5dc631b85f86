"""`conformance run` as a session: corpus -> selection -> each implementation -> reports."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from conformance.contracts.normalizer import CHECKS, NAME
from conformance.corpus.cases import load_corpus
from conformance.corpus.expectations import expected_failures_for
from conformance.corpus.select import Selection
from conformance.engine import growth as growth_check
from conformance.engine.coverage import DEFAULT_MIN_JUDGED
from conformance.engine.growth import GrowthSettings, growth_result, judge_growth
from conformance.engine.plans import result_count
from conformance.engine.runner import run_implementation
from conformance.errors import UsageError
from conformance.model.options import Options
from conformance.model.results import Verdict
from conformance.session.events import Finished, Handler
from conformance.session.lastfailed import (
    Key,
    LastFailedRecorder,
    last_failed_path,
    load_last_failed,
    rerun_filter,
)
from conformance.session.orchestrator import (
    Context,
    Job,
    Session,
    SessionSettings,
)
from conformance.transport.connections import Connection
from conformance.transport.impls import connect
from conformance.transport.spec import (
    DEFAULT_START_TIMEOUT,
    ImplementationSpec,
    parse_impl,
    parse_options,
)

__all__ = [
    "RunSettings",
    "execute",
    "implementation_specs",
    "run_session",
]


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
    #: Seconds each implementation may take to start, apart from `timeout` per request.
    start_timeout: float = DEFAULT_START_TIMEOUT
    budget: float | None = None
    #: The share of its applicable checks each implementation must judge (percent).
    min_judged: float = DEFAULT_MIN_JUDGED
    #: The growth check (SPEC 14) after the cases, or None for none (`--no-growth`).
    growth: GrowthSettings | None = field(default_factory=GrowthSettings)
    #: Stop after this many failing results (`--maxfail`, `-x` for 1), or never.
    maxfail: int | None = None
    #: Run only the checks that failed last time, per implementation (`--last-failed`).
    last_failed: bool = False


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


def run_session(
    settings: RunSettings, handlers: Sequence[Handler], *, echo: Callable[..., None]
) -> Finished:
    """The corpus against each implementation; events go to `handlers`."""
    specs = implementation_specs(settings.impls, settings.option_sets)
    corpus = load_corpus(settings.case_dirs)
    # Case-file errors come first and name file:line; an empty selection that is only empty
    # because files failed to load is their consequence, not a usage error of its own.
    problems = [str(problem) for problem in corpus.errors]
    for problem in problems:
        echo(problem, err=True)
    try:
        cases = settings.selection.apply(corpus.cases)
    except UsageError:
        if not problems:
            raise
        cases = []
    checks = settings.selection.checks
    # The growth check times the normalizer: it comes with the normalizer's own checks.
    normalizer = any(case.contract == NAME for case in cases) and any(
        check in CHECKS for check in checks
    )
    growth = settings.growth if normalizer else None
    total = result_count(cases, checks) + (growth is not None)
    failed_before = _last_failed(settings)

    def job(spec: ImplementationSpec) -> Job:
        expected = expected_failures_for(settings.expectations_dir, spec.label)
        # What `--last-failed` leaves to run, decided once the options are known.
        chosen: list[Callable[[str, str], bool] | None] = [None]

        def count(connection: Connection, wanted: Callable[[str, str], bool] | None) -> int:
            options = Options.from_mapping(connection.info.options)
            timed = growth is not None and (
                wanted is None or wanted(growth_check.CASE, growth_check.CHECK)
            )
            return result_count(cases, checks, options, wanted) + timed

        def recount(connection: Connection) -> int:
            # The profile the implementation declared decides which cases run (derived
            # ones stand in for written ones): the total counts those, as the runner runs.
            if failed_before is not None:
                chosen[0] = rerun_filter(
                    spec.label,
                    failed_before.get(spec.label, set()),
                    lambda wanted: count(connection, wanted),
                    echo,
                )
            return count(connection, chosen[0])

        def work(connection: Connection, context: Context) -> None:
            wanted = chosen[0]
            judged = run_implementation(
                connection,
                cases,
                checks=checks,
                expected_failures=expected,
                on_result=context.emit,
                stop=context.stopping,
                wanted=wanted,
            )
            if growth is None or context.stopping():
                return
            if wanted is not None and not wanted(growth_check.CASE, growth_check.CHECK):
                return
            # Rerunning a failed growth check alone (`--last-failed`) judges no case first.
            alone = wanted is not None and not judged.results
            if alone or any(result.verdict != Verdict.SKIP for result in judged.results):
                result = growth_result(connection, growth, stop=context.stopping)
            else:  # timing alone is no judgement: the run must still say it judged nothing
                result = judge_growth("no case was judged", growth)
            context.emit(result)

        def opened() -> Connection:
            return connect(
                spec,
                timeout=settings.timeout,
                validate_protocol=settings.validate_protocol,
                start_timeout=settings.start_timeout,
            )

        return Job(spec, total, work, opened, recount)

    session = Session(
        [job(spec) for spec in specs],
        SessionSettings(
            selection=settings.selection.to_json(),
            budget=settings.budget,
            min_judged=settings.min_judged,
            maxfail=settings.maxfail,
            problems=problems,
        ),
        handlers,
        echo=echo,
    )
    return session.run()


def _last_failed(settings: RunSettings) -> dict[str, set[Key]] | None:
    """The failures the last run recorded, with `--last-failed` (None without it)."""
    if not settings.last_failed:
        return None
    if settings.report_dir is None:
        return {}
    return load_last_failed(last_failed_path(settings.report_dir))


def execute(
    settings: RunSettings, *, echo: Callable[..., None], handlers: Sequence[Handler] = ()
) -> int:
    """`conformance run`: the standard handlers plus `handlers`; returns the exit status."""
    from conformance.session.handlers import release, standard_handlers

    standard = standard_handlers(settings.report_dir, echo)
    # The record for `--last-failed`, kept beside the reports (written before them: the
    # report writer gives up the directory's lock).
    record = [LastFailedRecorder(settings.report_dir)] if settings.report_dir is not None else []
    try:
        return run_session(settings, [*record, *standard, *handlers], echo=echo).status
    finally:
        release(standard)
