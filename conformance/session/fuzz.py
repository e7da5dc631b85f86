"""One `conformance fuzz`: each implementation x each property -> found cases -> reports."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from conformance.contracts import fuzz_properties
from conformance.corpus.cases import load_corpus
from conformance.corpus.check import load_retired
from conformance.errors import UsageError
from conformance.fuzz.campaign import Job, job_seconds, open_database, run_jobs
from conformance.fuzz.found import record_found
from conformance.fuzz.properties import Target, run_property
from conformance.model.options import Options
from conformance.model.results import FuzzResult, ImplementationRun, Verdict
from conformance.session.run import exit_status, finish, implementation_specs, open_connection
from conformance.transport.spec import ImplementationSpec

DEFAULT_EXAMPLES = 500
DEFAULT_DATABASE = ".hypothesis/conformance"


@dataclass(frozen=True, slots=True)
class FuzzSettings:
    impls: Sequence[str]
    option_sets: Sequence[str]
    case_dirs: Sequence[Path]
    properties: Sequence[str] = field(default_factory=fuzz_properties)
    max_examples: int = DEFAULT_EXAMPLES
    #: A time budget for all properties together, instead of `max_examples`.
    seconds: float | None = None
    seed: int | None = None
    #: A directory or a redis:// URL, shared between runs and machines, or None for none.
    database: str | None = DEFAULT_DATABASE
    #: Processes to fuzz in: (implementation, property) jobs are spread over them.
    workers: int = 1
    report_dir: Path | None = Path("reports")
    timeout: float = 5.0


def execute_fuzz(
    settings: FuzzSettings,
    *,
    echo: Callable[..., None],
    progress: Callable[[str], None] | None = None,
) -> int:
    known = fuzz_properties()
    unknown = sorted(set(settings.properties) - set(known))
    if unknown:
        raise UsageError(f"unknown property {unknown[0]!r}; the properties are {', '.join(known)}")
    started = time.perf_counter()
    specs = implementation_specs(settings.impls, settings.option_sets)
    seed = settings.seed if settings.seed is not None else random.randrange(2**32)
    echo(f"fuzzing with seed {seed} (replay exactly: --seed {seed} --database none)")
    corpus = load_corpus(settings.case_dirs)
    taken = {case.id for case in corpus.cases}
    for directory in settings.case_dirs:
        if directory.is_dir():
            taken |= load_retired(directory)
    found_dir = (settings.report_dir or Path("reports")) / "found"
    jobs = len(specs) * len(settings.properties)
    share = job_seconds(settings.seconds, jobs, settings.workers)
    database = open_database(settings.database)

    def done(run: ImplementationRun, spec: ImplementationSpec, result: FuzzResult) -> None:
        """Record a finished property: its found case written, its line printed."""
        if result.verdict in (Verdict.FAIL, Verdict.ERROR):
            options = Options.from_mapping(run.info.options)
            result = record_found(result, spec.label, spec.spec, options, taken, found_dir)
        run.fuzz.append(result)
        rate = result.examples / result.seconds if result.seconds else 0.0
        line = (
            f"{spec.label}: {result.property}: {result.verdict.value} after "
            f"{result.examples} examples ({rate:.0f}/s)"
        )
        echo(line + (f": {result.reason}" if result.reason else ""))
        if result.case_file:
            echo(f"  minimal case written to {result.case_file}")

    runs: list[ImplementationRun] = []
    pending: list[Job] = []
    by_label: dict[str, tuple[ImplementationRun, ImplementationSpec]] = {}
    for spec in specs:
        connection = open_connection(
            spec, timeout=settings.timeout, validate_protocol=False, echo=echo
        )
        if isinstance(connection, ImplementationRun):
            runs.append(connection)
            continue
        run = ImplementationRun(connection.info)
        runs.append(run)
        by_label[spec.label] = run, spec
        if settings.workers > 1:  # the workers connect for themselves
            connection.close()
            pending += [
                Job(
                    spec,
                    name,
                    settings.max_examples,
                    seed,
                    settings.database,
                    share,
                    settings.timeout,
                )
                for name in settings.properties
            ]
            continue
        target = Target(connection, Options.from_mapping(connection.info.options))
        try:
            for name in settings.properties:
                if progress is not None:
                    progress(f"{spec.label}: {name} ...")
                deadline = time.monotonic() + share if share is not None else None
                result = run_property(
                    name,
                    target,
                    max_examples=settings.max_examples,
                    seed=seed,
                    database=database,
                    key=f"{spec.label}/{name}".encode(),
                    deadline=deadline,
                )
                if progress is not None:
                    progress("")
                done(run, spec, result)
        finally:
            connection.close()
    for job, result in run_jobs(pending, settings.workers) if pending else ():
        done(*by_label[job.spec.label], result)
    for run in runs:  # in the order of the properties, whichever worker finished first
        run.fuzz.sort(key=lambda result: settings.properties.index(result.property))
    selection = {
        "fuzz": {
            "properties": list(settings.properties),
            "seed": seed,
            "max_examples": settings.max_examples,
            "seconds": settings.seconds,
            "workers": settings.workers,
        }
    }
    run = finish(runs, selection, started, settings.report_dir, echo)
    return exit_status(run, usage_problems=False)
