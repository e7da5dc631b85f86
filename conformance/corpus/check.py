"""`conformance check`: the corpus checks itself.

Schema (while loading), IDs, taxonomy (with the `source:` an entry may require) and
credentials in cassettes here; each case's own contract checks the rest (agreement with its
reference; for the normalizer, conservation and agreement under every option profile a
case's expectations must hold for).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import yaml

from conformance.contracts import contract_of
from conformance.model.cases import CaseFileProblem, CaseIdentity, Corpus

#: The mark of a taxonomy entry whose cases must each name their upstream `source:`.
SOURCE_REQUIRED = "required"


@dataclass(frozen=True, slots=True)
class Taxonomy:
    entries: Mapping[str, Mapping[str, str]]
    file: Path | None


def load_taxonomy(directory: Path) -> Taxonomy | CaseFileProblem:
    path = directory / "taxonomy.yaml"
    try:
        data = yaml.safe_load(path.read_text("utf-8"))
    except (OSError, yaml.YAMLError) as error:
        return CaseFileProblem(path, 0, f"cannot load the taxonomy: {error}")
    if not isinstance(data, dict) or not isinstance(data.get("entries"), dict):
        return CaseFileProblem(
            path, 1, "the taxonomy needs a mapping `entries:` of ID -> {section, title}"
        )
    return Taxonomy(data["entries"], path)


def load_retired(directory: Path) -> set[str]:
    path = directory / "retired-ids.txt"
    if not path.exists():
        return set()
    lines = path.read_text("utf-8").splitlines()
    return {line.split()[0] for line in lines if line.strip() and not line.startswith("#")}


def check_corpus(
    corpus: Corpus,
    taxonomy: Taxonomy,
    retired: set[str],
    *,
    suggest: bool = False,
    coverage: bool = True,
) -> list[CaseFileProblem]:
    """Every problem found, in file order. The corpus is good when the list is empty.

    `coverage`: also require a case for every taxonomy entry (for the taxonomy's own corpus,
    not for a few extra cases checked against it)."""
    problems = list(corpus.errors)
    problems += _cassette_secrets(corpus)
    problems += _identities(corpus.cases, retired)
    problems += _taxonomy(corpus.cases, taxonomy, coverage=coverage)
    for case in corpus.cases:
        problems += contract_of(case).check_case(case, suggest=suggest)
    return sorted(problems, key=lambda p: (str(p.file), p.line))


def _cassette_secrets(corpus: Corpus) -> Iterator[CaseFileProblem]:
    """A credential in any cassette of the corpus (docs/cassettes.md, scrubbing)."""
    from conformance.cassettes._secrets import corpus_cassettes, problems

    used = [case.cassette.path for case in corpus.cases if case.cassette is not None]
    for path in corpus_cassettes(corpus.files, used):
        for line, message in problems(path):
            yield CaseFileProblem(path, line, message)


def _identities(cases: Iterable[CaseIdentity], retired: set[str]) -> Iterator[CaseFileProblem]:
    first_id: dict[str, CaseIdentity] = {}
    first_slug: dict[str, CaseIdentity] = {}
    for case in cases:
        if case.id in retired:
            yield CaseFileProblem(
                case.file,
                case.line,
                f"case ID {case.id} is retired "
                "(cases/retired-ids.txt); IDs are never reused: pick a new one",
            )
        for seen, key, what in ((first_id, case.id, "ID"), (first_slug, case.slug, "slug")):
            if key in seen:
                yield CaseFileProblem(
                    case.file,
                    case.line,
                    f"duplicate case {what} {key!r}, first used at {seen[key].where}",
                )
            else:
                seen[key] = case


def _taxonomy(
    cases: Iterable[CaseIdentity], taxonomy: Taxonomy, *, coverage: bool
) -> Iterator[CaseFileProblem]:
    covered: set[str] = set()
    for case in cases:
        covered.add(case.taxonomy)
        info = taxonomy.entries.get(case.taxonomy)
        if info is None:
            yield CaseFileProblem(
                case.file,
                case.line,
                f"unknown taxonomy entry {case.taxonomy!r}; the entries are in {taxonomy.file}",
            )
        elif info.get("source") == SOURCE_REQUIRED and case.source is None:
            yield CaseFileProblem(
                case.file,
                case.line,
                f"case {case.id} ({case.slug}) has no `source:`; its taxonomy entry "
                f"{case.taxonomy} is marked `source: required` in {taxonomy.file}: name the "
                "upstream test file, issue or pull request the case comes from",
            )
    if coverage and taxonomy.file is not None:
        lines = taxonomy.file.read_text("utf-8").splitlines()
        for entry in sorted(set(taxonomy.entries) - covered):
            line = next(
                (n for n, text in enumerate(lines, 1) if text.strip().startswith(f"{entry}:")), 0
            )
            yield CaseFileProblem(
                taxonomy.file,
                line,
                f"taxonomy entry {entry} has no case: "
                "add one, or remove the entry if nothing can show it",
            )
