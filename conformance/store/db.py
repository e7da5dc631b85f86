"""The results store: one SQLite file holding every run imported into it.

A run is identified by the SHA-256 of its canonical JSON (the results document with sorted
keys and no spaces), so importing the same results twice, from a file or straight from the
session that made them, adds it once. Each run keeps the whole document (compressed), its
date, its harness, spec and corpus versions and where it came from; each implementation of
it its name, version, language, options and profile; and each result a row for queries:

    SELECT i.label, i.version, r.verdict, count(*) FROM results r
    JOIN implementations i ON i.id = r.implementation GROUP BY 1, 2, 3;

The corpus version is the digest of the written case IDs the run judged (a results document
carries no corpus version of its own): runs over the same cases share it.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import zlib
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from conformance.errors import UsageError
from conformance.model.cases import written_id
from conformance.model.results import Run
from conformance.reports import load_results

#: Where `conformance store import`, `run --store` and `site` look without `--store`.
DEFAULT_STORE = Path("reports") / "results.sqlite"
#: The schema's version, kept in SQLite's `user_version`.
SCHEMA_VERSION = 1

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY,
    hash TEXT NOT NULL UNIQUE,
    started TEXT NOT NULL,
    harness_version TEXT NOT NULL,
    spec_version TEXT NOT NULL,
    corpus TEXT NOT NULL,
    duration REAL NOT NULL,
    source TEXT NOT NULL,
    imported TEXT NOT NULL,
    document BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS implementations (
    id INTEGER PRIMARY KEY,
    run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    label TEXT NOT NULL,
    name TEXT NOT NULL,
    version TEXT NOT NULL,
    language TEXT NOT NULL,
    profile TEXT NOT NULL,
    options TEXT NOT NULL,
    spec TEXT NOT NULL,
    failure TEXT
);
CREATE TABLE IF NOT EXISTS results (
    implementation INTEGER NOT NULL REFERENCES implementations(id) ON DELETE CASCADE,
    "case" TEXT NOT NULL,
    written TEXT NOT NULL,
    category TEXT NOT NULL,
    level TEXT NOT NULL,
    "check" TEXT NOT NULL,
    verdict TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS results_by_case ON results(written, "check");
CREATE INDEX IF NOT EXISTS implementations_by_label ON implementations(label, profile);
"""


class StoreError(UsageError):
    """A store file that cannot be opened or is not a results store (exit status 2)."""


@dataclass(frozen=True, slots=True)
class Imported:
    """What importing one results document did."""

    source: str
    hash: str
    #: False when the store already held this run (nothing was added).
    new: bool
    implementations: int
    results: int


@dataclass(frozen=True, slots=True)
class StoredRun:
    """A run as the store holds it."""

    id: int
    hash: str
    started: str
    harness_version: str
    spec_version: str
    corpus: str
    source: str
    imported: str
    run: Run


def canonical(run: Run) -> bytes:
    return json.dumps(
        run.to_json(), sort_keys=True, separators=(",", ":"), ensure_ascii=True
    ).encode("ascii")


def content_hash(run: Run) -> str:
    return hashlib.sha256(canonical(run)).hexdigest()


def corpus_digest(run: Run) -> str:
    ids = sorted({written_id(r.case) for i in run.implementations for r in i.results})
    return hashlib.sha256("\n".join(ids).encode("utf-8")).hexdigest()[:12]


def profile_of(options: Any) -> str:
    profile = options.get("profile") if isinstance(options, dict) else None
    return profile if isinstance(profile, str) else ""


class Store:
    """An open store; use as a context manager or call `close()`."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.db = sqlite3.connect(self.path, timeout=60)
            self.db.execute("PRAGMA foreign_keys = ON")
            version = self.db.execute("PRAGMA user_version").fetchone()[0]
            if version not in (0, SCHEMA_VERSION):
                raise StoreError(
                    f"{self.path}: a results store of schema version {version}; this "
                    f"harness reads version {SCHEMA_VERSION}"
                )
            with self.db:
                self.db.executescript(SCHEMA)
                self.db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        except sqlite3.DatabaseError as error:
            raise StoreError(f"{self.path}: not a results store ({error})") from None

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.db.close()

    def add(self, run: Run, source: str) -> Imported:
        """Import `run` unless the store holds it already (by content hash)."""
        data = canonical(run)
        digest = hashlib.sha256(data).hexdigest()
        counts = (len(run.implementations), sum(len(i.results) for i in run.implementations))
        with self.db:
            known = self.db.execute("SELECT 1 FROM runs WHERE hash = ?", (digest,)).fetchone()
            if known:
                return Imported(source, digest, False, *counts)
            cursor = self.db.execute(
                "INSERT INTO runs (hash, started, harness_version, spec_version, corpus,"
                " duration, source, imported, document) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    digest,
                    run.started,
                    run.harness_version,
                    run.spec_version,
                    corpus_digest(run),
                    run.duration,
                    source,
                    datetime.now(UTC).isoformat(timespec="seconds"),
                    zlib.compress(data, 6),
                ),
            )
            run_id = cursor.lastrowid
            for implementation in run.implementations:
                info = implementation.info
                row = self.db.execute(
                    "INSERT INTO implementations (run, label, name, version, language,"
                    " profile, options, spec, failure) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        run_id,
                        info.label,
                        info.name,
                        info.version,
                        info.language,
                        profile_of(info.options),
                        json.dumps(info.options, sort_keys=True, ensure_ascii=False),
                        info.spec,
                        implementation.failure,
                    ),
                ).lastrowid
                self.db.executemany(
                    'INSERT INTO results (implementation, "case", written, category, level,'
                    ' "check", verdict) VALUES (?, ?, ?, ?, ?, ?, ?)',
                    (
                        (
                            row,
                            r.case,
                            written_id(r.case),
                            r.category,
                            r.level,
                            r.check,
                            r.verdict.value,
                        )
                        for r in implementation.results
                    ),
                )
        return Imported(source, digest, True, *counts)

    def runs(self) -> list[StoredRun]:
        """Every run, oldest first (by the date it started, then by import)."""
        return list(self._runs("SELECT * FROM runs ORDER BY started, id", ()))

    def run(self, hash_prefix: str) -> StoredRun:
        """The one run whose hash starts with `hash_prefix`."""
        found = list(
            self._runs("SELECT * FROM runs WHERE hash LIKE ? ORDER BY id", (hash_prefix + "%",))
        )
        if len(found) != 1:
            what = "no run" if not found else f"{len(found)} runs"
            raise StoreError(f"{self.path}: {what} with a hash starting {hash_prefix!r}")
        return found[0]

    def count(self) -> int:
        return int(self.db.execute("SELECT count(*) FROM runs").fetchone()[0])

    def _runs(self, query: str, parameters: Sequence[Any]) -> Iterator[StoredRun]:
        cursor = self.db.execute(query, parameters)
        names = [column[0] for column in cursor.description]
        for values in cursor:
            row = dict(zip(names, values, strict=True))
            document = json.loads(zlib.decompress(row.pop("document")))
            row.pop("duration")
            yield StoredRun(**row, run=Run.from_json(document))


@contextmanager
def opened(path: Path) -> Iterator[Store]:
    store = Store(path)
    try:
        yield store
    finally:
        store.close()


def import_files(path: Path, files: Iterable[Path]) -> list[Imported]:
    """Import each results document (validated as `conformance diff` reads them) into the
    store at `path`; the source each run records is the file's name as given."""
    with opened(path) as store:
        return [store.add(load_results(file), str(file)) for file in files]
