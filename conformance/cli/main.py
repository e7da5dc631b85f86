"""The `conformance` command line: parses options, calls the layers, picks exit codes.

Exit status everywhere: 0 all as expected, 1 something failed or regressed, 2 a usage,
configuration or case-file error.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from conformance._version import __version__
from conformance.cli.common import (
    RegistryChoice,
    budget_options,
    cases_option,
    exit_with,
    fail,
    note_missing_c_scan,
    options_option,
    report_dir_option,
    timeout_options,
    usage_error,
)
from conformance.cli.implementations import bench, fingerprint, matrix, smoke
from conformance.cli.lazy_group import LazyGroup
from conformance.cli.store_commands import StoreImporter, import_option, store_option
from conformance.contracts import all_checks, fuzz_properties, op_contracts
from conformance.corpus.cases import bundled_cases_dir
from conformance.corpus.select import Selection
from conformance.errors import ConformanceError, UsageError
from conformance.model.c_scan import C_SCAN

#: Commands imported only when one of them runs: the corpus's own, the profiles and the
#: capture tools.
LAZY_COMMANDS = {
    "check": "conformance.cli.corpus_commands:check",
    "dump": "conformance.cli.corpus_commands:dump",
    "taxonomy": "conformance.cli.corpus_commands:taxonomy",
    "profiles": "conformance.cli.profiles_command:profiles",
    "decode": "conformance.cli.capture_commands:decode",
    "import": "conformance.cli.capture_commands:import_",
    "approve": "conformance.cli.capture_commands:approve",
    "record": "conformance.cli.capture_commands:record",
    "serve": "conformance.cli.replay_commands:serve",
    "replay": "conformance.cli.replay_commands:replay",
    "store": "conformance.cli.store_commands:store",
    "site": "conformance.cli.site_command:site",
    # A library's releases, each in its own environment, and the findings page.
    "env": "conformance.cli.versions_commands:env",
    "versions": "conformance.cli.versions_commands:versions",
    "bisect": "conformance.cli.versions_commands:bisect",
    "findings": "conformance.cli.versions_commands:findings",
}


def _existing_expectations(
    context: click.Context, parameter: click.Parameter, value: Path | None
) -> Path | None:
    """`--expectations DIR` given explicitly must name a directory: leaving it out is how a
    repository without expected failures runs (./expectations is then read if it exists)."""
    if value is None or value.is_dir():
        return value
    problem = "is not a directory" if value.exists() else "does not exist"
    usage_error(
        f"--expectations {value}: {problem}. Leave the option out to run without expected "
        "failures (./expectations is read when it exists), or create the directory with "
        "one <NAME>.yaml per implementation (docs/implementations.md)"
    )


@click.group(
    cls=LazyGroup,
    lazy_subcommands=LAZY_COMMANDS,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.version_option(
    __version__,
    prog_name="conformance",
    # Whether the install built the C scan (docs/bench.md): speed questions start here.
    message="%(prog)s, version %(version)s, delimiter scan: "
    + ("C" if C_SCAN is not None else "regular expressions (not built, or turned off)"),
)
def main() -> None:
    """Conformance suite for reasoning-channel normalizers."""
    note_missing_c_scan()


@main.command()
@click.option(
    "--impl",
    "impls",
    multiple=True,
    metavar="[NAME=]SPEC",
    help="An implementation: `reference`, `python:module:attr` or `cmd:<command>` "
    "(repeatable; several give the side-by-side report). Default: the reference.",
)
@options_option(
    "Options to run under, overriding what the implementation declares "
    "(JSON object; prefix NAME= for one implementation)."
)
@cases_option
@click.option("--category", "categories", multiple=True, help="Only this category.")
@click.option(
    "--taxonomy",
    "taxonomy_entries",
    multiple=True,
    help="Only this taxonomy entry or prefix (SPLIT, SPLIT.close).",
)
@click.option("--id", "ids", multiple=True, help="Only this case ID.")
@click.option("--level", "levels", multiple=True, type=click.Choice(["must", "should", "info"]))
@click.option(
    "--check",
    "checks",
    multiple=True,
    type=RegistryChoice(all_checks),
    help="Only this check (default: all).",
)
@click.option(
    "-k",
    "keyword",
    help="pytest-style expression over ID, slug, category, "
    "taxonomy and level, e.g. 'split and not lone'.",
)
@report_dir_option(default=Path("reports") / "run")
@click.option(
    "--expectations",
    "expectations_dir",
    type=click.Path(path_type=Path),
    callback=_existing_expectations,
    help="Directory of expected-failure files `<NAME>.yaml` (default: ./expectations if it "
    "exists). Given explicitly, it must exist: a misspelt path is an error, not a run "
    "without the expected failures.",
)
@timeout_options
@click.option(
    "--validate-protocol",
    is_flag=True,
    help="Validate every protocol reply against its JSON Schema.",
)
@click.option(
    "--no-growth",
    is_flag=True,
    help="Skip the growth check (SPEC.md 14): timing each implementation on streams of 4 KB "
    "to 64 KB to see whether its time per character grows with the stream.",
)
@click.option(
    "--strict-growth",
    is_flag=True,
    help="Superlinear growth is a FAIL (exit status 1) rather than NON_STRICT.",
)
@click.option(
    "--maxfail",
    type=click.IntRange(1),
    metavar="N",
    help="Stop after N failing results (FAIL, ERROR, TIMEOUT or XPASS; XFAIL and NON_STRICT "
    "do not count), over all implementations: what finished is reported, the rest as not "
    "run, exit status 1.",
)
@click.option(
    "-x", "--exitfirst", is_flag=True, help="Stop at the first failing result (--maxfail 1)."
)
@click.option(
    "--last-failed",
    "--lf",
    "last_failed",
    is_flag=True,
    help="Run only the checks that failed in the last run into --report-dir, per "
    "implementation (within the other selection options); all of them when none did.",
)
@budget_options
@import_option
def run(
    impls: tuple[str, ...],
    option_sets: tuple[str, ...],
    case_dirs: tuple[Path, ...],
    categories: tuple[str, ...],
    taxonomy_entries: tuple[str, ...],
    ids: tuple[str, ...],
    levels: tuple[str, ...],
    checks: tuple[str, ...],
    keyword: str | None,
    report_dir: Path,
    expectations_dir: Path | None,
    timeout: float,
    start_timeout: float,
    validate_protocol: bool,
    no_growth: bool,
    strict_growth: bool,
    maxfail: int | None,
    exitfirst: bool,
    last_failed: bool,
    budget: float | None,
    min_judged: float,
    store: Path | None,
) -> None:
    """Run the corpus against implementations and write the reports.

    Exit status: 0 all as expected; 1 a failure, an implementation that judged less than
    --min-judged of the checks that apply to it (or nothing), the --budget ran out, or the
    run stopped at --maxfail (or -x); 2 a
    usage or case-file error or an implementation that cannot start; 130/143 interrupted by
    SIGINT/SIGTERM (the reports keep what finished).
    """
    from conformance.engine.growth import GrowthSettings
    from conformance.session.run import RunSettings, execute

    if no_growth and strict_growth:
        usage_error("--strict-growth and --no-growth contradict each other")
    if exitfirst and maxfail not in (None, 1):
        usage_error(f"-x (--maxfail 1) and --maxfail {maxfail} contradict each other")
    settings = RunSettings(
        impls=impls or ("reference",),
        option_sets=option_sets,
        case_dirs=case_dirs or (bundled_cases_dir(),),
        selection=Selection(
            categories, taxonomy_entries, ids, levels, checks or all_checks(), keyword
        ),
        report_dir=report_dir,
        expectations_dir=expectations_dir
        or (Path("expectations") if Path("expectations").is_dir() else None),
        timeout=timeout,
        start_timeout=start_timeout,
        validate_protocol=validate_protocol,
        budget=budget,
        min_judged=min_judged,
        growth=None if no_growth else GrowthSettings(strict=strict_growth),
        maxfail=1 if exitfirst else maxfail,
        last_failed=last_failed,
    )
    sinks = [StoreImporter(store, click.echo)] if store is not None else []
    exit_with(lambda: execute(settings, echo=click.echo, handlers=sinks))


@main.command()
@click.option(
    "--impl",
    "impls",
    multiple=True,
    metavar="[NAME=]SPEC",
    help="An implementation to fuzz (repeatable). Default: the reference.",
)
@options_option("Options to fuzz under, overriding what the implementation declares.")
@click.option(
    "--property",
    "properties",
    multiple=True,
    type=RegistryChoice(fuzz_properties),
    help="Only this property (repeatable). Default: all: the normalizer's six, then one per "
    f"other contract ({', '.join(entry.NAME for entry in op_contracts())}; SKIP for an "
    "implementation without it).",
)
@click.option(
    "--max-examples",
    type=click.IntRange(1),
    default=500,
    show_default=True,
    help="Examples per property.",
)
@click.option(
    "--time",
    "--duration",
    "seconds",
    type=click.FloatRange(0, min_open=True),
    help="A time budget in seconds for the whole session, instead of --max-examples.",
)
@click.option("--seed", type=int, help="Replay a session exactly (with --database none).")
@click.option(
    "--database",
    default=".hypothesis/conformance",
    show_default=True,
    help="The example database: a directory (shared between runs and CI machines), "
    "redis://HOST:PORT/DB (shared between machines; the `redis` extra), or `none`. "
    "Failures found before are replayed first.",
)
@click.option(
    "--workers",
    type=click.IntRange(1),
    default=1,
    show_default=True,
    help="Processes to fuzz in: the (implementation, property) pairs are spread over them.",
)
@report_dir_option(
    "Reports go here, and minimal failing cases into its `found/`.",
    default=Path("reports") / "fuzz",
)
@timeout_options
@budget_options
@import_option
def fuzz(
    impls: tuple[str, ...],
    option_sets: tuple[str, ...],
    properties: tuple[str, ...],
    max_examples: int,
    seconds: float | None,
    seed: int | None,
    database: str,
    workers: int,
    report_dir: Path,
    timeout: float,
    start_timeout: float,
    budget: float | None,
    min_judged: float,
    store: Path | None,
) -> None:
    """Property-based fuzzing: find, shrink and write minimal failing cases."""
    from conformance.session.fuzz import FuzzSettings, execute_fuzz

    settings = FuzzSettings(
        impls=impls or ("reference",),
        option_sets=option_sets,
        case_dirs=(bundled_cases_dir(),),
        properties=properties or fuzz_properties(),
        max_examples=max_examples,
        seconds=seconds,
        seed=seed,
        database=None if database.lower() == "none" else database,
        workers=workers,
        report_dir=report_dir,
        timeout=timeout,
        start_timeout=start_timeout,
        budget=budget,
        min_judged=min_judged,
    )
    sinks = [StoreImporter(store, click.echo)] if store is not None else []
    exit_with(lambda: execute_fuzz(settings, echo=click.echo, handlers=sinks))


# --- conformance diff: compare two results documents (reports/_diff.py) ----------------------


@main.command("diff")
@click.argument("old")
@click.argument("new")
@store_option(
    "OLD and NEW are runs of this results store (their hashes, or the start of them, as "
    "`conformance store list` shows them) rather than results.json files."
)
@click.option(
    "--format",
    "format_",
    type=click.Choice(["text", "markdown"]),
    default="text",
    show_default=True,
    help="Output format.",
)
def diff(old: str, new: str, store: Path | None, format_: str) -> None:
    """Compare two results.json files, or any two runs of a store: exit 1 if anything
    regressed (was ok, now not)."""
    from conformance.reports import load_results
    from conformance.reports._diff import compare, exit_status, render

    try:
        if store is None:
            before, after = load_results(Path(old)), load_results(Path(new))
        else:
            from conformance.store.db import opened

            if not store.is_file():
                fail(UsageError(f"--store {store}: no such file"))
            with opened(store) as runs:
                before, after = runs.run(old).run, runs.run(new).run
    except ConformanceError as error:
        fail(error)
    comparison = compare(before, after)
    click.echo(render(comparison, format_), nl=False)
    sys.exit(exit_status(comparison))


for command in (smoke, fingerprint, bench, matrix):
    main.add_command(command)
