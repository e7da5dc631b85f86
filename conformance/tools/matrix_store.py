"""One implementation's part of the matrix, kept on disk: the matrix cache and the results
directories that CI jobs write and `conformance matrix --merge` reads.

A `Stored` entry holds what the matrix shows of one implementation, before its expectation
file is applied: who it said it was, how long it took to start, its raw results, its
fingerprint, and its growth check and benchmark per benchmark setting. Or, for an adapter
whose library is not installed, why it was skipped. Files are gzipped JSON
(matrix_codec.py), written atomically; one that cannot be read counts as absent.

The cache (`$CONFORMANCE_CACHE_DIR/matrix`, by default
`$XDG_CACHE_HOME/reasoning-conformance/matrix` or `~/.cache/reasoning-conformance/matrix`)
names each file by its key (matrix_keys.py); a results directory by label.
"""

from __future__ import annotations

import gc
import gzip
import json
import os
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from conformance._cache import cache_dir
from conformance.errors import UsageError
from conformance.model.results import CaseResult, ImplementationInfo
from conformance.tools.bench_figures import BenchResult, BenchSettings
from conformance.tools.fingerprint import Fingerprint
from conformance.tools.matrix_codec import CodecError, decode, encode
from conformance.tools.matrix_keys import FORMAT, digest

SUFFIX = ".json.gz"


@dataclass(slots=True)
class Measured:
    """The growth check and, when it passed, the benchmark, under one benchmark setting."""

    growth: CaseResult | None = None
    bench: BenchResult | None = None


@dataclass(slots=True)
class Stored:
    label: str
    #: The cache key, and what went into it (matrix_keys.py): for a reader wondering why an
    #: entry was or was not reused.
    key: str
    material: Mapping[str, Any]
    info: ImplementationInfo | None = None
    start_seconds: float | None = None
    #: Raw verdicts: no expectation file applied.
    results: list[CaseResult] = field(default_factory=list)
    fingerprint: Fingerprint | None = None
    #: Benchmark-setting key (`bench_key`) -> what was measured under it.
    measured: dict[str, Measured] = field(default_factory=dict)
    #: Why the adapter could not run here (its library is not installed); nothing else is set.
    skipped: str | None = None
    #: Seconds each part took when it was made (corpus, fingerprint, growth, bench).
    seconds: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "label": self.label,
            "key": self.key,
            "material": self.material,
            "skipped": self.skipped,
            "seconds": self.seconds,
            "info": encode(self.info),
            "start_seconds": self.start_seconds,
            "fingerprint": encode(self.fingerprint),
            "measured": {
                name: {"growth": encode(m.growth), "bench": encode(m.bench)}
                for name, m in self.measured.items()
            },
            "results": encode(self.results),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Stored:
        if data.get("format") != FORMAT:
            raise CodecError(f"stored in format {data.get('format')}, not {FORMAT}")
        return cls(
            label=data["label"],
            key=data["key"],
            material=data["material"],
            info=decode(data["info"]),
            start_seconds=data["start_seconds"],
            results=decode(data["results"]),
            fingerprint=decode(data["fingerprint"]),
            measured={
                name: Measured(decode(m["growth"]), decode(m["bench"]))
                for name, m in data["measured"].items()
            },
            skipped=data["skipped"],
            seconds=data.get("seconds", {}),
        )


def bench_key(settings: BenchSettings | None) -> str:
    return "none" if settings is None else digest(asdict(settings))[:16]


def default_cache_dir() -> Path | None:
    base = cache_dir()
    return None if base is None else base / "matrix"


def read(path: Path) -> Stored | None:
    try:
        with gzip.open(path, "rt", encoding="utf-8") as file, _uncollected():
            return Stored.from_json(json.load(file))
    except (OSError, ValueError, KeyError, TypeError, CodecError, EOFError):
        return None


@contextmanager
def _uncollected() -> Iterator[None]:
    """The garbage collector paused: an entry is a few hundred thousand new objects without a
    cycle among them, and the passes their making sets off would find nothing to free."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def write(path: Path, stored: Stored) -> None:
    """Atomically; a directory that cannot be written loses the entry, not the run."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=".", suffix=".tmp", dir=path.parent)
        try:
            with (
                os.fdopen(handle, "wb") as raw,
                gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=1, mtime=0) as file,
            ):
                file.write(json.dumps(stored.to_json(), ensure_ascii=False).encode("utf-8"))
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
    except OSError:
        pass


def cache_path(directory: Path, label: str, key: str) -> Path:
    return directory / f"{_safe(label)}-{key[:32]}{SUFFIX}"


def results_path(directory: Path, label: str) -> Path:
    return directory / f"{_safe(label)}{SUFFIX}"


def _safe(label: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in label)


def read_results(directories: Sequence[Path]) -> dict[str, Stored]:
    """The entries of results directories (`--results-out`), label -> entry, the first
    directory's first; an unreadable file is a usage error (a merge must not lose a job)."""
    found: dict[str, Stored] = {}
    for directory in directories:
        paths = sorted(directory.glob(f"*{SUFFIX}"))
        if not paths:
            raise UsageError(f"--merge {directory}: no matrix results (*{SUFFIX}) there")
        for path in paths:
            stored = read(path)
            if stored is None:
                raise UsageError(f"--merge: {path} is not matrix results of this version")
            found.setdefault(stored.label, stored)
    return found
