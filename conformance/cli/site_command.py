"""`conformance site`: the static results site built from a results store."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from conformance.cli.common import fail
from conformance.cli.store_commands import DEFAULT_STORE, store_option
from conformance.errors import ConformanceError, UsageError


@click.command()
@store_option("The results store to build from.", default=DEFAULT_STORE)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("reports") / "site",
    show_default=True,
    help="The directory the site is written into.",
)
@click.option(
    "--base-url",
    default=None,
    help="The URL the site is published at (https://OWNER.github.io/REPOSITORY): the badge "
    "snippets and the JSON index give absolute URLs under it.",
)
@click.option(
    "--cases",
    "case_dirs",
    multiple=True,
    type=click.Path(exists=True, path_type=Path),
    help="Case files whose input and expected channels the case pages show (repeatable). "
    "Default: the bundled corpus.",
)
@click.option(
    "--fail-on-regression",
    is_flag=True,
    help="Exit 1 when an implementation's latest run regressed against its run before "
    "(the regressions are also written to OUT/regressions.md).",
)
def site(
    store: Path,
    out: Path,
    base_url: str | None,
    case_dirs: tuple[Path, ...],
    fail_on_regression: bool,
) -> None:
    """Build the results site: an index of implementations by category and level with
    filters, a page per implementation (options, results by category, history, known
    divergences, badges), a page per case, the changes between runs, and a JSON index.

    Exit status 0; 1 with --fail-on-regression when a verdict got worse; 2 when the store
    is missing or is not a results store."""
    from conformance.site.build import PLACEHOLDER_URL, SiteSettings, build
    from conformance.site.regressions import regressions_markdown
    from conformance.store.db import Store

    try:
        if not store.is_file():
            raise UsageError(
                f"--store {store}: no such file (import results with `conformance store "
                "import`, or run with --store)"
            )
        with Store(store) as opened:
            runs = opened.runs()
        settings = SiteSettings(out, base_url or PLACEHOLDER_URL, case_dirs)
        built = build(runs, settings)
    except ConformanceError as error:
        fail(error)
    largest = max(built.pages.items(), key=lambda item: item[1])
    click.echo(
        f"wrote {len(built.pages)} files into {out} in {built.seconds:.1f} s "
        f"({sum(built.pages.values()) // 1024} KB; largest {largest[0]}, {largest[1] // 1024} KB)"
    )
    report = out / "regressions.md"
    if built.regressions:
        report.write_text(regressions_markdown(built.regressions, base_url), "utf-8")
        click.echo(f"regressions: {report}")
    elif report.exists():
        report.unlink()
    if fail_on_regression and built.regressions:
        sys.exit(1)
