"""Which implementations a matrix shows, each with its stored entry so far: the reference and
the selected adapters, looked up in the cache by key (matrix_keys.py); or, for `--merge`, the
entries CI jobs wrote to their results directories, checked to come from one harness and
corpus and to hold the measurements asked for."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from conformance.adapters.adapter import Adapter
from conformance.errors import UsageError
from conformance.model.cases import CaseIdentity
from conformance.tools.bench_figures import BenchSettings
from conformance.tools.matrix_jobs import complete
from conformance.tools.matrix_keys import (
    corpus_digest,
    digest,
    harness_digest,
    implementation_material,
)
from conformance.tools.matrix_store import Stored, cache_path, read, read_results

REFERENCE = "reference"

Target = tuple[str, str, Adapter | None]


def cached_targets(
    cases: Sequence[CaseIdentity],
    adapters: Sequence[Adapter],
    timeout: float,
    cache_dir: Path | None,
) -> tuple[dict[str, Stored], list[Target]]:
    """The reference and `adapters`, each with its entry: found in the cache (complete or
    not), or new (only its key)."""
    base = {"harness": harness_digest(), "corpus": corpus_digest(cases)}
    targets: list[Target] = [(REFERENCE, REFERENCE, None)]
    targets += [(a.label, a.spec, a) for a in adapters]
    stored = {}
    for label, spec, _ in targets:
        material = {**base, "implementation": implementation_material(label, spec, timeout)}
        key = digest(material)
        found = None
        if cache_dir is not None:
            found = read(cache_path(cache_dir, label, key))
        if found is None or found.key != key:
            found = Stored(label, key, material)
        stored[label] = found
    return stored, targets


def merged_targets(
    directories: Sequence[Path], bench: BenchSettings | None, adapters: Sequence[Adapter]
) -> tuple[dict[str, Stored], list[Target]]:
    """The entries of the results directories of CI jobs, each complete, in the order of
    ADAPTERS (the reference first): the matrix they make together."""
    stored = read_results(directories)
    kinds = {(s.material["harness"], s.material["corpus"]) for s in stored.values()}
    if len(kinds) > 1 or next(iter(kinds))[0] != harness_digest():
        raise UsageError(
            "--merge: the results come from different versions of the harness or corpus "
            "(or another version than this one); run every job of the matrix on one commit"
        )
    if REFERENCE not in stored:
        raise UsageError("--merge: none of the results directories holds the reference")
    missing = [label for label, s in stored.items() if not complete(s, bench)]
    if missing:
        raise UsageError(
            f"--merge: {', '.join(missing)} measured under another --bench than this one; "
            "give --merge the --bench the jobs ran with"
        )
    known = {a.label: a for a in adapters}
    targets: list[Target] = [(REFERENCE, REFERENCE, None)]
    targets += [(a.label, a.spec, a) for a in adapters if a.label in stored]
    targets += [
        (label, s.material["implementation"]["spec"], None)
        for label, s in stored.items()
        if label != REFERENCE and label not in known
    ]
    return stored, targets


def not_merged(
    stored: Mapping[str, Stored], adapters: Sequence[Adapter]
) -> list[tuple[Adapter, str]]:
    """The adapters no merged job ran, and why they are not in the matrix."""
    reason = "in none of the merged results directories"
    return [(a, reason) for a in adapters if a.label not in stored]
