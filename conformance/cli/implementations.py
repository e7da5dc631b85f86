"""Commands about implementations rather than the corpus: smoke, fingerprint, bench, matrix."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import click

from conformance.cli.common import (
    connected,
    fail,
    format_option,
    impl_option,
    progress_line,
    timeout_option,
)
from conformance.cli.store_commands import import_option, import_run
from conformance.errors import ConformanceError, UsageError
from conformance.session.orchestrator import EXIT_FAILED, EXIT_OK, EXIT_USAGE


@click.command()
@impl_option
@timeout_option()
@click.option(
    "--validate-protocol",
    is_flag=True,
    help="Validate every protocol reply against its JSON Schema.",
)
def smoke(impl: str, timeout: float, validate_protocol: bool) -> None:
    """Send an implementation a few trivial requests: does it speak the protocol?

    Each answer is `ok`, `DIFF` (well-formed, but not the reference's split under the
    implementation's options: `conformance run` says more) or `FAIL`. Exit status 0 if it
    speaks the protocol (differences included), 1 if not, 2 if it cannot be started.
    """
    from conformance.tools.smoke import smoke as run_smoke

    with connected(impl, timeout=timeout, validate_protocol=validate_protocol) as connection:
        info = connection.info
        click.echo(f"{info.label}: {info.name} {info.version} ({info.language})")
        results = run_smoke(connection)
    width = max(len(result.name) for result in results)
    for result in results:
        click.echo(f"{result.status:4}  {result.name:{width}}  {result.message}")
    failed = sum(not result.ok for result in results)
    if failed:
        click.echo(
            f"FAIL: {info.label} does not speak the protocol ({failed} of {len(results)} "
            "smoke requests failed)"
        )
        sys.exit(EXIT_FAILED)
    click.echo(f"OK: {info.label} speaks the protocol ({len(results)} smoke requests answered)")
    differ = sum(not result.agrees for result in results)
    if differ:
        click.echo(
            f"DIFF: {differ} of its answers {'differs' if differ == 1 else 'differ'} from "
            f"the reference's split under its options; `conformance run --impl {impl}` checks "
            "its splits on the whole corpus"
        )


@click.command()
@impl_option
@timeout_option()
@format_option("text", "markdown", "json")
def fingerprint(impl: str, timeout: float, format_: str) -> None:
    """Find the policy an implementation follows, option by option (SPEC.md section 5).

    Prints, per option, the value its outputs agree with (or that they agree with none, or
    with different values on different inputs) and the evidence, then the options to
    declare. Exit status 0 if it follows every option it declares, 1 if not, 2 if it cannot
    be started.
    """
    from conformance.tools.fingerprint import fingerprint as run_fingerprint
    from conformance.tools.fingerprint_report import render_fingerprint

    with connected(impl, timeout=timeout) as connection:
        result = run_fingerprint(connection)
    click.echo(render_fingerprint(result, format_), nl=False)
    sys.exit(EXIT_OK if result.consistent else EXIT_FAILED)


@click.command()
@click.option(
    "--impl",
    "impls",
    multiple=True,
    metavar="[NAME=]SPEC",
    help="An implementation (repeatable). Default: the reference.",
)
@click.option(
    "--quick",
    is_flag=True,
    help="Small inputs (100 KB, growth 200 KB to 2 MB): seconds, not minutes.",
)
@click.option(
    "--budget",
    type=click.FloatRange(min=0, min_open=True),
    metavar="SECONDS",
    help="The most one throughput figure (or the holdback run) may take: a slower "
    "implementation is measured on the start of the document. Default: 2 with --quick, "
    "no limit otherwise.",
)
@timeout_option(120.0, " (one request is a document)")
@format_option("text", "markdown", "json")
def bench(
    impls: tuple[str, ...], quick: bool, budget: float | None, timeout: float, format_: str
) -> None:
    """Measure implementations on the same inputs: throughput, holdback, growth.

    In process (`reference`, `python:`) the normalizer alone is timed; through `cmd:` each
    document is one protocol request, so the figure is the protocol plus the implementation.
    Exit status 0 when every figure was measured, 1 when a run failed, 2 for a start failure.
    """
    from conformance.tools.bench import FULL, QUICK, render_bench
    from conformance.tools.bench import bench as run_bench

    settings = QUICK if quick else FULL
    if budget is not None:
        settings = dataclasses.replace(settings, budget=budget)
    progress = progress_line()
    results = []
    for impl in impls or ("reference",):
        with connected(impl, timeout=timeout) as connection:
            results.append(run_bench(connection, settings, progress=progress))
    if progress is not None:
        progress("")
    click.echo(render_bench(results, settings, format_), nl=False)
    sys.exit(EXIT_FAILED if any(result.problems for result in results) else EXIT_OK)


@click.command()
@click.option(
    "--adapter",
    "only",
    multiple=True,
    metavar="LABEL",
    help="Only this adapter (repeatable); the reference always runs. Default: every adapter "
    "whose library is installed.",
)
@click.option(
    "--report-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("reports") / "matrix",
    show_default=True,
    help="Where the side-by-side reports go.",
)
@click.option(
    "--docs",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also write the ecosystem page here (docs/ecosystem.md regenerates the committed "
    "page). It is always written as ecosystem.md in the report directory.",
)
@click.option(
    "--bench",
    "bench_mode",
    type=click.Choice(["small", "quick", "full", "none"]),
    default="quick",
    show_default=True,
    help="Speed measurements: `conformance bench --quick` (a 100 KB document, growth 200 KB "
    "/ 2 MB), the same with its 1 MB document (small), its full sizes (1 MB, growth 1 MB / "
    "10 MB), or none. Implementations the growth check finds superlinear are not "
    "benchmarked, so a longer document finds nothing more about them.",
)
@timeout_option(60.0, " (benchmark streams are long)")
@click.option(
    "--update-expectations",
    is_flag=True,
    help="Rewrite the adapters' expectation files (locks keyed by the rules of "
    "conformance/adapters/divergences.yaml) from this run's failures, then judge the run "
    "against them. From a source checkout they go to conformance/adapters/expectations; an "
    "installed package is never written into (see --expectations-out).",
)
@click.option(
    "--expectations-out",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Where --update-expectations writes the expectation files (default: the "
    "checkout's conformance/adapters/expectations, or REPORT_DIR/expectations when "
    "conformance is installed rather than run from a checkout).",
)
@click.option(
    "--jobs",
    "-j",
    type=click.IntRange(min=1),
    default=None,
    help="Implementations run at once, in as many worker processes, each taking the next "
    "implementation when done (default: the number of CPUs; 1 runs them one after the other "
    "in this process).",
)
@click.option(
    "--cache-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Where each implementation's results, fingerprint and measurements are kept, by "
    "what they depend on (the implementation's code and installed version, the corpus, the "
    "harness), so an unchanged implementation is not judged again. Default: "
    "$XDG_CACHE_HOME/reasoning-conformance/matrix (CONFORMANCE_CACHE_DIR moves it).",
)
@click.option("--no-cache", is_flag=True, help="Judge every implementation again.")
@click.option(
    "--results-out",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Also write each implementation's results here, for `--merge` (one CI job's part "
    "of a matrix split across jobs: docs/ci.md).",
)
@click.option(
    "--merge",
    "merge",
    multiple=True,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    metavar="DIR",
    help="Run nothing: make the matrix, its reports and the ecosystem page from the "
    "--results-out directories of several jobs (repeatable).",
)
@import_option
def matrix(
    only: tuple[str, ...],
    report_dir: Path,
    docs: Path | None,
    bench_mode: str,
    timeout: float,
    update_expectations: bool,
    expectations_out: Path | None,
    jobs: int | None,
    cache_dir: Path | None,
    no_cache: bool,
    results_out: Path | None,
    merge: tuple[Path, ...],
    store: Path | None,
) -> None:
    """Run the reference and every installed adapter (pydantic-ai, LiteLLM, SGLang, vLLM,
    transformers, the Vercel AI SDK, ...) and write the side-by-side reports and the
    ecosystem page.

    Implementations run in parallel worker processes (--jobs), and one whose code, library
    version, corpus and harness did not change since it was last judged is served from the
    cache. Progress, with an estimate of the time left, goes to standard error.

    Exit status 0 when every adapter behaves as its expectation file says, 1 when one
    regressed or improved (FAIL or XPASS), 2 for a usage error.
    """
    import os

    from conformance.tools.bench import FULL, QUICK
    from conformance.tools.ecosystem import render_ecosystem
    from conformance.tools.matrix import SMALL, MatrixSettings, run_matrix
    from conformance.tools.matrix_store import default_cache_dir

    if merge and (only or results_out):
        fail(
            UsageError("--merge makes the matrix from results: give no --adapter or --results-out")
        )
    settings = MatrixSettings(
        report_dir=report_dir,
        only=only,
        bench={"small": SMALL, "quick": QUICK, "full": FULL, "none": None}[bench_mode],
        timeout=timeout,
        update_expectations=update_expectations,
        expectations_out=expectations_out,
        jobs=jobs or os.cpu_count() or 1,
        cache_dir=None if no_cache else cache_dir or default_cache_dir(),
        results_out=results_out,
        merge=merge,
    )
    try:
        result = run_matrix(settings, echo=click.echo)
    except ConformanceError as error:
        fail(error)
    if store is not None:
        try:
            import_run(store, result.run, click.echo)
        except ConformanceError as error:
            fail(error)
    page = render_ecosystem(result)
    for path in (report_dir / "ecosystem.md", docs):
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(page, "utf-8")
            click.echo(f"wrote {path}")
    if any(entry.run.failure for entry in result.entries):
        sys.exit(EXIT_USAGE)
    sys.exit(EXIT_OK if result.run.ok else EXIT_FAILED)
