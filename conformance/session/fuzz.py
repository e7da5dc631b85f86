"""One `conformance fuzz`: each implementation x each property -> found cases -> reports."""

from __future__ import annotations

import dataclasses
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from hypothesis.database import DirectoryBasedExampleDatabase

from conformance.contracts import fuzz_properties
from conformance.corpus.cases import load_corpus
from conformance.corpus.check import load_retired
from conformance.errors import UsageError
from conformance.fuzz.properties import (
    Target,
    found_case,
    found_contract_case,
    run_property,
    write_found,
)
from conformance.model.options import Options
from conformance.model.results import ImplementationRun, Verdict
from conformance.session.run import exit_status, finish, implementation_specs, open_connection

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
    #: A directory shared between runs (and CI machines), or None for no database.
    database: Path | None = Path(DEFAULT_DATABASE)
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
    share = (settings.seconds or 0) / (len(specs) * len(settings.properties))
    database = None
    if settings.database is not None:
        database = DirectoryBasedExampleDatabase(str(settings.database))
    runs: list[ImplementationRun] = []
    for spec in specs:
        connection = open_connection(
            spec, timeout=settings.timeout, validate_protocol=False, echo=echo
        )
        if isinstance(connection, ImplementationRun):
            runs.append(connection)
            continue
        options = Options.from_mapping(connection.info.options)
        target = Target(connection, options)
        run = ImplementationRun(connection.info)
        try:
            for name in settings.properties:
                if progress is not None:
                    progress(f"{spec.label}: {name} ...")
                deadline = time.monotonic() + share if settings.seconds else None
                result = run_property(
                    name,
                    target,
                    max_examples=settings.max_examples,
                    seed=seed,
                    database=database,
                    key=f"{spec.label}/{name}".encode(),
                    deadline=deadline,
                )
                example = result.counterexample
                if result.verdict in (Verdict.FAIL, Verdict.ERROR) and example:
                    if "contract" in example:
                        case_id, text = found_contract_case(result, spec.label, spec.spec, taken)
                    else:
                        case_id, text = found_case(result, spec.label, spec.spec, options, taken)
                    taken.add(case_id)
                    path = write_found(found_dir, spec.label, case_id, text, name)
                    result = dataclasses.replace(result, case_file=str(path))
                run.fuzz.append(result)
                if progress is not None:
                    progress("")
                rate = result.examples / result.seconds if result.seconds else 0.0
                line = (
                    f"{spec.label}: {name}: {result.verdict.value} after {result.examples} "
                    f"examples ({rate:.0f}/s)"
                )
                echo(line + (f": {result.reason}" if result.reason else ""))
                if result.case_file:
                    echo(f"  minimal case written to {result.case_file}")
        finally:
            connection.close()
        runs.append(run)
    selection = {
        "fuzz": {
            "properties": list(settings.properties),
            "seed": seed,
            "max_examples": settings.max_examples,
            "seconds": settings.seconds,
        }
    }
    run = finish(runs, selection, started, settings.report_dir, echo)
    return exit_status(run, usage_problems=False)
