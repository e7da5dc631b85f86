"""`conformance check`, `dump` and `taxonomy`: the corpus about itself (its problems, the
whole of it as one document, and the table of what covers each taxonomy entry)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from conformance.cli.common import cases_option
from conformance.corpus.cases import bundled_cases_dir, load_corpus
from conformance.corpus.check import check_corpus, load_retired, load_taxonomy
from conformance.corpus.dump import dump_corpus
from conformance.corpus.taxonomy_table import render_taxonomy, replace_between_markers
from conformance.model.cases import CaseFileProblem
from conformance.session.orchestrator import EXIT_FAILED, EXIT_OK, EXIT_USAGE


@click.command()
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


@click.command()
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


@click.command()
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
