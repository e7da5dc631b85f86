"""Commands that replay captures to clients: `serve` over HTTP on 127.0.0.1 for clients in any
language, `replay` to Python clients through vcrpy; bringing captures in is
`capture_commands` (docs/cassettes.md)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from conformance.cli.common import (
    budget_options,
    cases_option,
    fail,
    options_option,
    report_dir_option,
    usage_error,
)
from conformance.contracts.normalizer import CHECKS
from conformance.corpus.cases import bundled_cases_dir, load_corpus
from conformance.corpus.select import Selection
from conformance.errors import ConformanceError, UsageError
from conformance.session.orchestrator import Context
from conformance.transport.connections import Connection
from conformance.transport.spec import ImplementationSpec


@click.command()
@click.argument(
    "directory", required=False, type=click.Path(exists=True, file_okay=False, path_type=Path)
)
@cases_option
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8765,
    show_default=True,
    help="Port on 127.0.0.1 (0: any free).",
)
@click.option(
    "--split",
    type=click.Choice(["frames", "adversarial", "bytes", "none"]),
    default="frames",
    show_default=True,
    help="How response bodies are cut into HTTP chunks (docs/cassettes.md).",
)
@click.option(
    "--delay",
    type=click.FloatRange(0, 60),
    default=0.0,
    help="Seconds to wait between HTTP chunks (0 to 60).",
)
def serve(
    directory: Path | None, case_dirs: tuple[Path, ...], port: int, split: str, delay: float
) -> None:
    """Answer HTTP requests on 127.0.0.1 from the cassettes under DIRECTORY (default: the
    bundled ones, wherever the package is installed).

    Each cassette's base URL is http://127.0.0.1:PORT/<its path without .yaml>; GET / lists
    them with the cases that use them, and POST /_verdict/<CASE ID> with {"assistant",
    "thinking"} judges what a client showed. Runs until interrupted.
    """
    from conformance.cassettes import bundled_cassettes_dir
    from conformance.replay.http_server import ReplayServer

    directory = directory or bundled_cassettes_dir()
    cases = load_corpus(case_dirs or (bundled_cases_dir(),)).cases
    try:
        server = ReplayServer(directory, cases=cases, split=split, delay=delay, port=port)
    except OSError as error:
        usage_error(f"cannot listen on 127.0.0.1:{port}: {error}")
    except ValueError as error:
        usage_error(str(error))
    for problem in server.problems:
        click.echo(f"skipped: {problem}", err=True)
    click.echo(f"serving {len(server.served)} cassettes on {server.url} (split: {split})")
    for entry in server.served:
        ids = ",".join(case.id for case in entry.cases) or "-"
        click.echo(f"  {server.url}/{entry.name}  {'/'.join(set(entry.families))}  cases {ids}")
    sys.stdout.flush()
    try:
        server.httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.httpd.server_close()
    verdicts = [v["verdict"] for v in server.verdicts]
    if verdicts:
        counts = ", ".join(f"{v} {verdicts.count(v)}" for v in sorted(set(verdicts)))
        click.echo(f"verdicts given: {counts}")


@click.command()
@click.option(
    "--impl",
    "impls",
    multiple=True,
    required=True,
    metavar="[NAME=]python:module:attr",
    help="A Python client declaring the `http` capability (repeatable).",
)
@options_option("Options to judge under, overriding what the client declares.")
@cases_option
@click.option("--category", "categories", multiple=True, help="Only this category.")
@click.option("--id", "ids", multiple=True, help="Only this case ID.")
@click.option("-k", "keyword", help="pytest-style expression over ID, slug, category, ...")
@report_dir_option(default=Path("reports") / "replay")
@budget_options
def replay(
    impls: tuple[str, ...],
    option_sets: tuple[str, ...],
    case_dirs: tuple[Path, ...],
    categories: tuple[str, ...],
    ids: tuple[str, ...],
    keyword: str | None,
    report_dir: Path,
    budget: float | None,
    min_judged: float,
) -> None:
    """Check Python clients that make their own HTTP requests, on the cassette cases.

    Each client gets an HttpCall per case, makes the request, and vcrpy replays the
    recorded response (record mode none); its channels are judged as check `http`.
    """
    from conformance.interface import metadata
    from conformance.model.options import Options
    from conformance.replay.vcrpy_clients import replay_run, replayed_cases
    from conformance.session.handlers import standard_handlers
    from conformance.session.orchestrator import Job, Session, SessionSettings
    from conformance.session.run import implementation_specs
    from conformance.transport.impls import connect

    try:
        specs = implementation_specs(impls, option_sets)
        selection = Selection(categories, (), ids, (), CHECKS, keyword)
        corpus = load_corpus(case_dirs or (bundled_cases_dir(),))
        for problem in corpus.errors:
            click.echo(str(problem), err=True)
        try:
            chosen = selection.apply(corpus.cases)
        except ConformanceError:
            if not corpus.errors:
                raise
            chosen = []
        cases = [case for case in chosen if case.cassette is not None]
        if not cases and not corpus.errors:
            raise UsageError("the selection has no cassette-backed case")
        for spec in specs:
            if not spec.spec.startswith("python:"):
                raise UsageError(
                    f"--impl {spec.spec!r}: replay takes python: clients; check other "
                    "languages with `conformance serve` (docs/cassettes.md)"
                )

        def job(spec: ImplementationSpec) -> Job:
            def opened() -> Connection:
                connection = connect(spec)
                factory = getattr(connection, "factory", None)
                if factory is None or "http" not in metadata(factory)["capabilities"]:
                    raise UsageError(
                        f"{spec.label}: does not declare the http capability "
                        '(@implementation(..., capabilities=["http"])); run normalizers with '
                        "`conformance run`"
                    )
                return connection

            def work(connection: Connection, context: Context) -> None:
                factory = getattr(connection, "factory")  # noqa: B009 - checked in opened()
                for result in replay_run(factory, connection.info, cases).results:
                    context.emit(result)

            def recount(connection: Connection) -> int:
                # Under the client's profile, derived cases stand in for written ones.
                options = Options.from_mapping(connection.info.options)
                return len(replayed_cases(cases, options))

            return Job(spec, len(cases), work, opened, recount)

        session = Session(
            [job(spec) for spec in specs],
            SessionSettings(
                selection={**selection.to_json(), "checks": ["http"]},
                budget=budget,
                min_judged=min_judged,
                problems=[str(problem) for problem in corpus.errors],
            ),
            standard_handlers(report_dir, click.echo),
            echo=click.echo,
        )
        status = session.run().status
    except ConformanceError as error:
        fail(error)
    sys.exit(status)
