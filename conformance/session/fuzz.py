"""`conformance fuzz` as a session: each implementation x each property -> found cases."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from conformance.contracts import fuzz_properties
from conformance.corpus.cases import load_corpus
from conformance.corpus.check import load_retired
from conformance.engine.coverage import DEFAULT_MIN_JUDGED
from conformance.errors import UsageError
from conformance.fuzz.campaign import FuzzJob, job_seconds, open_database, run_jobs
from conformance.fuzz.distinct import DistinctBugs
from conformance.fuzz.found import record_found
from conformance.fuzz.properties import Target, fuzz_property
from conformance.model.options import Options
from conformance.model.requests import Error, Reply, Request
from conformance.model.results import FuzzResult, ImplementationInfo, Verdict
from conformance.session.events import Handler
from conformance.session.orchestrator import Context, Job, Session, SessionSettings
from conformance.session.run import implementation_specs
from conformance.transport.connections import Connection
from conformance.transport.impls import connect
from conformance.transport.spec import DEFAULT_START_TIMEOUT, ImplementationSpec

DEFAULT_EXAMPLES = 500
DEFAULT_DATABASE = ".hypothesis/conformance"
#: How the subprocess transport words a connection it stopped restarting (transport/subprocess.py).
GAVE_UP = "gave up after"


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
    #: Processes to fuzz in: each implementation's properties are spread over them.
    workers: int = 1
    report_dir: Path | None = Path("reports") / "fuzz"
    timeout: float = 5.0
    #: Seconds each implementation may take to start, apart from `timeout` per request.
    start_timeout: float = DEFAULT_START_TIMEOUT
    #: A hard limit for the whole session (what is not fuzzed by then is reported not run).
    budget: float | None = None
    #: The share of its applicable checks each implementation must judge (percent).
    min_judged: float = DEFAULT_MIN_JUDGED


class _Watched:
    """A connection that notices when its transport has given up on the implementation:
    from then on every reply is the same error, and fuzzing it only shrinks noise."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.info: ImplementationInfo = connection.info
        self.is_reference = connection.is_reference
        self.lost: str | None = None

    def send(self, requests: Sequence[Request]) -> list[Reply]:
        return list(self.answers(requests))

    def cpu_seconds(self) -> float | None:
        return self.connection.cpu_seconds()

    def answers(self, requests: Sequence[Request]) -> Iterator[Reply]:
        for reply in self.connection.answers(requests):
            if isinstance(reply, Error) and reply.message.startswith(GAVE_UP):
                self.lost = reply.message
            yield reply

    def close(self) -> None:
        self.connection.close()


def fuzz_session(
    settings: FuzzSettings, handlers: Sequence[Handler], *, echo: Callable[..., None]
) -> int:
    known = fuzz_properties()
    unknown = sorted(set(settings.properties) - set(known))
    if unknown:
        raise UsageError(f"unknown property {unknown[0]!r}; the properties are {', '.join(known)}")
    specs = implementation_specs(settings.impls, settings.option_sets)
    seed = settings.seed if settings.seed is not None else random.randrange(2**32)
    echo(f"fuzzing with seed {seed} (replay exactly: --seed {seed} --database none)")
    corpus = load_corpus(settings.case_dirs)
    taken = {case.id for case in corpus.cases}
    for directory in settings.case_dirs:
        if directory.is_dir():
            taken |= load_retired(directory)
    # Absolute now: an implementation that changes directory must not move the found cases.
    found_dir = (settings.report_dir or Path("reports") / "fuzz").absolute() / "found"
    share = job_seconds(settings.seconds, len(specs) * len(settings.properties), settings.workers)
    database = open_database(settings.database)

    def job(spec: ImplementationSpec) -> Job:
        def work(connection: Connection, context: Context) -> None:
            watched = _Watched(connection)
            options = Options.from_mapping(connection.info.options)
            bugs = DistinctBugs(lambda r: record_found(r, spec, options, taken, found_dir))

            def report(results: list[FuzzResult]) -> None:
                """One property's results: each distinct bug once, across properties."""
                context.expect(len(results) - 1)
                for result in bugs.add(results, context.run.fuzz):
                    context.emit(result)

            if settings.workers > 1:
                # Each worker connects for itself; this connection only told the options.
                connection.close()
                jobs = [
                    FuzzJob(
                        spec,
                        name,
                        settings.max_examples,
                        seed,
                        settings.database,
                        _within(share, context.deadline),
                        settings.timeout,
                    )
                    for name in settings.properties
                ]
                # Each kept as its worker finishes: an interrupt loses only unfinished jobs.
                for _, results in run_jobs(jobs, settings.workers):
                    report(results)
                # In property order, whichever worker finished first.
                context.run.fuzz.sort(key=lambda r: settings.properties.index(r.property))
                return
            target = Target(watched, options)
            for name in settings.properties:
                if watched.lost is not None:
                    reason = f"not fuzzed: the connection was lost ({watched.lost})"
                    context.emit(FuzzResult(name, Verdict.ERROR, 0, 0.0, seed, reason))
                    continue
                deadline = time.monotonic() + share if share is not None else None
                if context.deadline is not None:
                    deadline = min(deadline or context.deadline, context.deadline)
                results = fuzz_property(
                    name,
                    target,
                    max_examples=settings.max_examples,
                    seed=seed,
                    database=database,
                    key=f"{spec.label}/{name}".encode(),
                    deadline=deadline,
                )
                if watched.lost is not None:
                    # What Hypothesis shrank is the dead connection, not a bug of the input.
                    reason = f"the connection was lost during fuzzing: {watched.lost}"
                    spent = results[0]
                    context.emit(
                        FuzzResult(name, Verdict.ERROR, spent.examples, spent.seconds, seed, reason)
                    )
                else:
                    report(results)

        def opened() -> Connection:
            return connect(
                spec,
                timeout=settings.timeout,
                validate_protocol=False,
                start_timeout=settings.start_timeout,
            )

        return Job(spec, len(settings.properties), work, opened)

    selection = {
        "fuzz": {
            "properties": list(settings.properties),
            "seed": seed,
            "max_examples": settings.max_examples,
            "seconds": settings.seconds,
            "workers": settings.workers,
        }
    }
    session = Session(
        [job(spec) for spec in specs],
        SessionSettings(
            selection=selection, budget=settings.budget, min_judged=settings.min_judged
        ),
        handlers,
        echo=echo,
    )
    return session.run().status


def _within(share: float | None, deadline: float | None) -> float | None:
    """A job's seconds: its share of the time budget, no later than the session's deadline."""
    left = None if deadline is None else max(deadline - time.monotonic(), 0.0)
    if share is None or left is None:
        return share if left is None else left
    return min(share, left)


def execute_fuzz(
    settings: FuzzSettings, *, echo: Callable[..., None], handlers: Sequence[Handler] = ()
) -> int:
    """`conformance fuzz`: the standard handlers plus `handlers`; returns the exit status."""
    from conformance.session.handlers import release, standard_handlers

    standard = standard_handlers(settings.report_dir, echo)
    try:
        return fuzz_session(settings, [*standard, *handlers], echo=echo)
    finally:
        release(standard)
