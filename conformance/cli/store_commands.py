"""The results store and the site built from it: `conformance store import|list`, `conformance
site`, and `--store` for `run`, `fuzz` and `matrix` (their results imported when they end)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from conformance.cli.common import fail
from conformance.errors import ConformanceError
from conformance.session.events import Finished, Handler

#: Kept here rather than imported from conformance.store: `run` and `matrix` read it when the
#: command line is built, before anything runs (tests hold the two equal).
DEFAULT_STORE = Path("reports") / "results.sqlite"


def store_option(help_text: str, *, default: Path | None = None) -> Callable[[Any], Any]:
    return click.option(
        "--store",
        "store",
        type=click.Path(dir_okay=False, path_type=Path),
        default=default,
        show_default=default is not None,
        help=help_text,
    )


#: `--store` of `run`, `fuzz` and `matrix`.
import_option = store_option(
    "Also import this session's results into the results store at PATH (an SQLite file, "
    f"created if missing; {DEFAULT_STORE} is the store `conformance site` reads by default)."
)


class StoreImporter(Handler):
    """Imports the finished run into a store (the report writer's mechanism, another sink)."""

    def __init__(self, path: Path, echo: Callable[..., None]) -> None:
        self.path = path
        self.echo = echo

    def finished(self, event: Finished) -> None:
        from conformance.store.db import Store

        with Store(self.path) as store:
            imported = store.add(event.run, "session")
        _say(imported, self.path, self.echo)


def import_run(path: Path, run: Any, echo: Callable[..., None]) -> None:
    """`matrix --store`: the matrix's run into the store at `path`."""
    StoreImporter(path, echo).finished(Finished(run, 0))


def _say(imported: Any, path: Path, echo: Callable[..., None]) -> None:
    what = "imported" if imported.new else "already held"
    where = "into" if imported.new else "in"
    echo(
        f"{what} {imported.source} {where} {path} (run {imported.hash[:12]}: "
        f"{imported.implementations} implementations, {imported.results} results)"
    )


@click.group()
def store() -> None:
    """The results store: one SQLite file into which results documents import."""


@store.command("import")
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@store_option("The store to import into (created if missing).", default=DEFAULT_STORE)
def import_(files: tuple[Path, ...], store: Path) -> None:
    """Import results.json files (of `run`, `fuzz` or `matrix`, from any machine).

    Idempotent: a run the store holds already (the same content, by SHA-256) is not added
    again. Exit status 0, or 2 when a file is not a results document or the store is not a
    results store."""
    from conformance.store.db import import_files

    try:
        for imported in import_files(store, files):
            _say(imported, store, click.echo)
    except ConformanceError as error:
        fail(error)


@store.command("list")
@store_option("The store to list.", default=DEFAULT_STORE)
def list_(store: Path) -> None:
    """The store's runs, oldest first: hash, date, versions, implementations."""
    from conformance.store.db import Store

    try:
        with Store(store) as opened:
            for stored in opened.runs():
                labels = ", ".join(
                    f"{i.info.label} {i.info.version}" for i in stored.run.implementations
                )
                click.echo(
                    f"{stored.hash[:12]}  {stored.started}  harness {stored.harness_version}"
                    f"  spec {stored.spec_version}  corpus {stored.corpus}  {labels}"
                )
    except ConformanceError as error:
        fail(error)
