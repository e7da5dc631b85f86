"""`conformance import --pending`: each interesting capture not in the corpus yet, copied
beside the corpus (scrubbed, with its provenance) and proposed as a pending case.

Each capture stands on its own: one that cannot be written (a credential the scrub cannot
remove, a case that would not load) leaves nothing behind, neither its copy nor its case
nor a directory made for them, and says why; the captures after it are still written. The
`cassettes/` directory beside the cases is made when there is none."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.capture.approve import capture_suffix, fresh_slug, slug_words
from conformance.capture.importer import Finding, chunks_hash
from conformance.capture.provenance import (
    Origin,
    origin_of,
    scrub,
    scrub_structure,
    with_provenance,
)
from conformance.cassettes._formats import read_capture
from conformance.cassettes._secrets import scan_cassette_text
from conformance.contracts.normalizer import own_cases
from conformance.corpus.casegen import (
    expectations_for,
    guess_taxonomy,
    new_case_id,
    render_case_file,
)
from conformance.corpus.cases import load_corpus, load_file
from conformance.corpus.check import load_retired
from conformance.errors import UsageError


class ImportProblem(UsageError):
    """The pending cases cannot be written; the message says why (exit status 2)."""


@dataclass(slots=True)
class Written:
    finding: Finding
    cassette: Path | None = None
    case_file: Path | None = None
    #: Why no case was written (a duplicate of a corpus case, ...).
    reason: str | None = None
    case_id: str | None = None
    #: Why this capture could not be written, and what to do (nothing of it is left behind).
    error: str | None = None


@dataclass(slots=True)
class _Copies:
    directory: Path
    done: dict[Path, Path] = field(default_factory=dict)
    #: The copies a written case refers to: kept when a later case of the same file fails.
    used: set[Path] = field(default_factory=set)
    #: The directories made for the copies, outermost first.
    made: list[Path] = field(default_factory=list)

    def directory_for(self, name: str) -> Path:
        """`directory/name`, made (with `directory`) where missing."""
        target = self.directory / name
        self.made += [d for d in (self.directory, target) if not d.is_dir() and d not in self.made]
        target.mkdir(parents=True, exist_ok=True)
        return target

    def discard(self, source: Path) -> None:
        """Remove the copy of `source` unless a written case refers to it, and the
        directories made for it that hold nothing else."""
        target = self.done.get(source.resolve())
        if target is not None and target not in self.used:
            target.unlink(missing_ok=True)
            del self.done[source.resolve()]
        for directory in reversed(self.made):
            if directory.is_dir() and not any(directory.iterdir()):
                directory.rmdir()
                self.made.remove(directory)


def write_pending(
    findings: Sequence[Finding],
    pending_dir: Path,
    cases_dir: Path | None = None,
    *,
    repository: str | None = None,
    commit: str | None = None,
    license: str | None = None,
    source_root: Path | None = None,
) -> list[Written]:
    """Write a pending case for each interesting finding not already in the corpus."""
    cassettes_dir = cassettes_beside(pending_dir)
    missing = [d for d in (pending_dir.parent, pending_dir) if not d.exists()]
    corpus_dirs = [d for d in (cases_dir, pending_dir) if d is not None and d.is_dir()]
    corpus = load_corpus(corpus_dirs) if corpus_dirs else None
    cases = own_cases(corpus.cases if corpus else ())
    known = {chunks_hash(case.chunks): case.id for case in cases}
    used = {case.id for case in (corpus.cases if corpus else ())}
    if cases_dir is not None and cases_dir.is_dir():
        used |= load_retired(cases_dir)
    slugs = {case.slug for case in (corpus.cases if corpus else ())}
    copies = _Copies(cassettes_dir)
    written: list[Written] = []
    for finding in findings:
        if not finding.interesting:
            continue
        digest = chunks_hash(finding.chunks)
        if digest in known:
            written.append(Written(finding, reason=f"already in the corpus as {known[digest]}"))
            continue
        origin = origin_of(finding.source, repository, commit, source_root)
        origin = Origin(origin.source, origin.repository, origin.commit, origin.path, license)
        case_id = new_case_id(used, first="23456789")
        slug = _slug(finding, slugs)
        try:
            copy = _copy(copies, finding, origin)
            name = copy.relative_to(cassettes_dir).as_posix()
            path = _write_case(pending_dir, case_id, slug, name, finding, origin)
        except (ImportProblem, OSError) as error:
            copies.discard(finding.source)
            written.append(Written(finding, error=_problem(error)))
            continue
        copies.used.add(copy)
        used.add(case_id)
        slugs.add(slug)
        known[digest] = case_id
        written.append(Written(finding, copy, path, case_id=case_id))
    for directory in reversed(missing):  # made for cases that were not written
        if directory.is_dir() and not any(directory.iterdir()):
            directory.rmdir()
    return written


def _problem(error: Exception) -> str:
    """Why a capture was not imported, and what to do."""
    if isinstance(error, ImportProblem):
        return str(error)
    reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
    where = f" in {error.filename}" if isinstance(error, OSError) and error.filename else ""
    return f"cannot write its copy or its case{where} ({reason}): nothing of it was kept"


def cassettes_beside(pending_dir: Path) -> Path:
    """The `cassettes/` directory where the pending cases in `pending_dir` find their
    captures (`cassettes_dir_for`): the nearest one beside it or in the two directories
    above it, or, where there is none, the one to make beside the cases (`cases/pending` ->
    `cassettes/` beside `cases/`), made with the first copy."""
    pending_dir = pending_dir.resolve()
    for ancestor in (pending_dir, *pending_dir.parents[:2]):
        candidate = ancestor / "cassettes"
        if candidate.is_dir() and not (candidate / "__init__.py").exists():
            return candidate
    cases = pending_dir.parent if pending_dir.name == "pending" else pending_dir
    return cases.parent / "cassettes"


def _copy(copies: _Copies, finding: Finding, origin: Origin) -> Path:
    source = finding.source.resolve()
    if source in copies.done:
        return copies.done[source]
    provider = slug_words(finding.provider or "") or "unknown"
    directory = copies.directory / provider
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", finding.source.stem).strip("-") or "capture"
    suffix = capture_suffix(finding.source)
    target, number = directory / f"{stem}{suffix}", 2
    while target.exists():
        target, number = directory / f"{stem}-{number}{suffix}", number + 1
    # Scrubbed and scanned in memory: nothing is written unless it scans clean.
    text, removed = scrub(finding.source.read_text("utf-8"))
    if scan_cassette_text(text):  # where the line-by-line scrub cannot reach
        text, more = scrub_structure(text)
        removed = sorted({*removed, *more})
    if not read_capture(text.encode("utf-8")).metadata.get("provenance"):
        provenance = origin.provenance(finding.provider)
        if removed:
            provenance["scrubbed"] = f"headers removed: {', '.join(removed)}"
        text = with_provenance(text, provenance)
    findings = scan_cassette_text(text)
    if findings:
        listed = "; ".join(str(finding) for finding in findings[:3])
        raise ImportProblem(
            f"it still looks like it holds a credential after scrubbing ({listed}); nothing "
            "was copied: remove it by hand and import the capture again"
        )
    copies.directory_for(provider)
    target.write_text(text, "utf-8")
    copies.done[source] = target
    return target


def _slug(finding: Finding, used: set[str]) -> str:
    words = slug_words(f"recorded {finding.provider or 'unknown'} {finding.source.stem}")
    base = words[:52].rstrip("-")
    if finding.interaction:
        base = f"{base}-{finding.interaction}"
    return fresh_slug(base, used, limit=60)


def _write_case(
    pending_dir: Path, case_id: str, slug: str, name: str, finding: Finding, origin: Origin
) -> Path:
    chunks = [chunk.to_json() for chunk in finding.chunks]
    kind = "stream" if finding.streaming else "non-streaming"
    title = f"Recorded {finding.provider} {finding.family} {kind}: {finding.source.stem}"
    case: dict[str, Any] = {
        "id": case_id,
        "slug": slug,
        "title": title[:90],
        "taxonomy": guess_taxonomy(chunks),
        "level": "must",
        "pending": True,
        "cassette": name,
        **({"interaction": finding.interaction} if finding.interaction else {}),
        **expectations_for(chunks),
        "provenance": [{"kind": "cassette", "ref": f"cassettes/{name}"}],
    }
    where = f"{origin.repository}@{origin.commit} " if origin.repository else ""
    case["note"] = f"Recorded: {where}{origin.path or origin.source}"
    header = "\n".join(
        [
            f"# Pending review: written by `conformance import` from {origin.source}",
            f"# (interaction {finding.interaction}: {finding.provider}, {finding.family}, "
            f"{finding.form}), copied to cassettes/{name}.",
            "# Every run reports it as SKIP (pending review) until accepted. Review it against",
            "# SPEC.md (title, taxonomy entry, level, the reference's expected split), then:",
            f"#   conformance approve cassettes/{name} --accept",
            "# The chunks decoded from the capture:",
            *(f"#   {json.dumps(chunk)}" for chunk in chunks[:200]),
            *(["#   ..."] if len(chunks) > 200 else []),
        ]
    )
    pending_dir.mkdir(parents=True, exist_ok=True)
    path = pending_dir / f"{case_id}-{slug}.yaml"
    description = "Captures imported from the wild, waiting for review (docs/cassettes.md)."
    path.write_text(header + "\n" + render_case_file("cassettes", description, [case]), "utf-8")
    _, errors = load_file(path)
    if errors:  # never leave a broken file behind
        path.unlink()
        raise ImportProblem(
            "its pending case did not load ("
            + "; ".join(map(str, errors))
            + "): nothing of it was kept; please report this with the capture"
        )
    return path
