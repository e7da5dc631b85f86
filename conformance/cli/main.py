"""The `conformance` command line: parses options, calls the layers, picks exit codes.

Exit status everywhere: 0 all as expected, 1 something failed or regressed, 2 a usage,
configuration or case-file error.
"""

from __future__ import annotations

import json
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
    options_option,
    report_dir_option,
    timeout_options,
    usage_error,
)
from conformance.cli.implementations import bench, fingerprint, matrix, smoke
from conformance.cli.lazy_group import LazyGroup
from conformance.contracts import all_checks, fuzz_properties, op_contracts
from conformance.corpus.cases import bundled_cases_dir, load_corpus
from conformance.corpus.check import check_corpus, load_retired, load_taxonomy
from conformance.corpus.dump import dump_corpus
from conformance.corpus.select import Selection
from conformance.corpus.taxonomy_table import render_taxonomy, replace_between_markers
from conformance.model.cases import CaseFileProblem
from conformance.model.grammar import C_SCAN
from conformance.session.orchestrator import EXIT_FAILED, EXIT_OK, EXIT_USAGE

#: The capture tools, imported only when one of them runs.
CAPTURE_COMMANDS = {
    "decode": "conformance.cli.capture_commands:decode",
    "import": "conformance.cli.capture_commands:import_",
    "approve": "conformance.cli.capture_commands:approve",
    "record": "conformance.cli.capture_commands:record",
    "serve": "conformance.cli.replay_commands:serve",
    "replay": "conformance.cli.replay_commands:replay",
}


@click.group(
    cls=LazyGroup,
    lazy_subcommands=CAPTURE_COMMANDS,
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
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Directory of expected-failure files `<NAME>.yaml` "
    "(default: ./expectations if it exists).",
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
@budget_options
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
    budget: float | None,
    allow_unjudged: bool,
) -> None:
    """Run the corpus against implementations and write the reports.

    Exit status: 0 all as expected; 1 a failure, an implementation that judged nothing, or
    the --budget ran out; 2 a usage or case-file error or an implementation that cannot
    start; 130/143 interrupted by SIGINT/SIGTERM (the reports keep what finished).
    """
    from conformance.engine.growth import GrowthSettings
    from conformance.session.run import RunSettings, execute

    if no_growth and strict_growth:
        usage_error("--strict-growth and --no-growth contradict each other")
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
        allow_unjudged=allow_unjudged,
        growth=None if no_growth else GrowthSettings(strict=strict_growth),
    )
    exit_with(lambda: execute(settings, echo=click.echo))


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
    allow_unjudged: bool,
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
        allow_unjudged=allow_unjudged,
    )
    exit_with(lambda: execute_fuzz(settings, echo=click.echo))


@main.command()
@cases_option
@click.option("--suggest", is_flag=True, help="Print YAML for each missing variant.")
def check(case_dirs: tuple[Path, ...], suggest: bool) -> None:
    """Check the corpus itself: schema, IDs, taxonomy, conservation, reference agreement."""
    dirs = case_dirs or (bundled_cases_dir(),)
    corpus = load_corpus(dirs)
    taxonomy_dir = next((d for d in dirs if (d / "taxonomy.yaml").exists()), bundled_cases_dir())
    taxonomy = load_taxonomy(taxonomy_dir)
    if isinstance(taxonomy, CaseFileProblem):
        click.echo(str(taxonomy), err=True)
        sys.exit(EXIT_USAGE)
    retired = set().union(*(load_retired(d) for d in {*dirs, taxonomy_dir} if d.is_dir()))
    # Cases checked against another directory's taxonomy (cases found by the fuzzer, say)
    # need not cover all of it.
    coverage = taxonomy_dir in dirs
    problems = check_corpus(corpus, taxonomy, retired, suggest=suggest, coverage=coverage)
    for problem in problems:
        click.echo(str(problem))
    summary = (
        f"{len(corpus.cases)} cases in {len(corpus.files)} files: "
        f"{len(problems)} problem{'s' if len(problems) != 1 else ''}"
    )
    click.echo(summary, err=True)
    if corpus.errors:
        sys.exit(EXIT_USAGE)
    sys.exit(EXIT_FAILED if problems else EXIT_OK)


@main.command()
@cases_option
@click.option(
    "--format",
    "format_",
    type=click.Choice(["json"]),
    default="json",
    show_default=True,
    help="Output format.",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write here instead of standard output.",
)
def dump(case_dirs: tuple[Path, ...], format_: str, output: Path | None) -> None:
    """The whole corpus as one document, with a content hash per case."""
    corpus = load_corpus(case_dirs or (bundled_cases_dir(),))
    for problem in corpus.errors:
        click.echo(str(problem), err=True)
    if corpus.errors:
        sys.exit(EXIT_USAGE)
    text = json.dumps(dump_corpus(corpus), ensure_ascii=False, indent=1) + "\n"
    if output is None:
        click.echo(text, nl=False)
    else:
        output.write_text(text, "utf-8")


@main.command()
@cases_option
@click.option(
    "--write",
    "target",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Replace the table between the taxonomy markers in this file.",
)
@click.option(
    "--check",
    "check_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Exit 1 if the table in this file is out of date.",
)
def taxonomy(case_dirs: tuple[Path, ...], target: Path | None, check_file: Path | None) -> None:
    """The taxonomy with the cases covering each entry, as Markdown."""
    dirs = case_dirs or (bundled_cases_dir(),)
    loaded = load_taxonomy(dirs[0] if dirs[0].is_dir() else bundled_cases_dir())
    if isinstance(loaded, CaseFileProblem):
        click.echo(str(loaded), err=True)
        sys.exit(EXIT_USAGE)
    table = render_taxonomy(loaded, load_corpus(dirs).cases)
    for path in filter(None, (target, check_file)):
        text = path.read_text("utf-8")
        updated = replace_between_markers(text, table)
        if updated is None:
            click.echo(
                f"{path}: no taxonomy markers (<!-- taxonomy:start --> and <!-- taxonomy:end -->)",
                err=True,
            )
            sys.exit(EXIT_USAGE)
        if path == target:
            path.write_text(updated, "utf-8")
        elif updated != text:
            click.echo(
                f"{path}: the taxonomy table is out of date; run "
                f"`conformance taxonomy --write {path}`",
                err=True,
            )
            sys.exit(EXIT_FAILED)
    if target is None and check_file is None:
        click.echo(table, nl=False)


@main.command("diff")
@click.argument("old", type=click.Path(path_type=Path))
@click.argument("new", type=click.Path(path_type=Path))
@click.option(
    "--format",
    "format_",
    type=click.Choice(["text", "markdown"]),
    default="text",
    show_default=True,
    help="Output format.",
)
def diff(old: Path, new: Path, format_: str) -> None:
    """Compare two results.json files: exit 1 if anything regressed (was ok, now not)."""
    from conformance.reports import ResultsFileError, load_results
    from conformance.reports._diff import compare, exit_status, render

    try:
        before, after = load_results(old), load_results(new)
    except ResultsFileError as error:
        fail(error)
    comparison = compare(before, after)
    click.echo(render(comparison, format_), nl=False)
    sys.exit(exit_status(comparison))


for command in (smoke, fingerprint, bench, matrix):
    main.add_command(command)
