"""Case files -> validated, frozen cases. Knows nothing of runners or reports."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable, Mapping
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

try:  # libyaml's parser when PyYAML was built with it: several times faster
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - depends on how PyYAML was built
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

from conformance.corpus import filecache, validation
from conformance.corpus.textchecks import (
    MAX_DEPTH,
    describe,
    invisible_characters,
    line_of,
    shape_problems,
)
from conformance.model.cases import (
    NORMALIZER,
    Case,
    CaseFileProblem,
    CaseIdentity,
    CassetteRef,
    ContractCase,
    Corpus,
    Provenance,
    Variant,
)
from conformance.model.chunks import Channels, Chunk

if TYPE_CHECKING:
    from conformance.contracts import Contract

__all__ = [
    "bundled_cases_dir",
    "case_files",
    "case_from_mapping",
    "load_corpus",
    "load_file",
    "schema",
]


@functools.cache
def schema(name: str) -> dict[str, Any]:
    text = resources.files("conformance.schemas").joinpath(name).read_text("utf-8")
    return json.loads(text)


def bundled_cases_dir() -> Path:
    """The corpus shipped with the package, or the checkout's `cases/`."""
    packaged = Path(str(resources.files("conformance"))) / "_corpus"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parent.parent.parent / "cases"


def case_files(paths: Iterable[Path]) -> list[Path]:
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found += sorted(p for p in path.rglob("*.yaml") if p.name != "taxonomy.yaml")
        else:
            found.append(path)
    return found


def load_corpus(paths: Iterable[Path]) -> Corpus:
    """Load every case file under `paths`; problems are collected, never raised."""
    files = case_files(paths)
    cases: list[CaseIdentity] = []
    errors: list[CaseFileProblem] = []
    parsed = filecache.ParsedFiles(filecache.loader_salt(_schemas())) if files else None
    for path in files:
        file_cases, file_errors = load_file(path, parsed)
        cases += file_cases
        errors += file_errors
    return Corpus(tuple(cases), tuple(errors), tuple(files))


def _schemas() -> dict[str, Any]:
    """Every schema a case file is validated against: a loaded file depends on them."""
    own = {entry.NAME: entry.SCHEMA for entry in _keyed_contracts()}
    return {
        "": schema("case-file.schema.json"),
        **{name: schema(s) if isinstance(s, str) else s for name, s in own.items()},
    }


def _keyed_contracts() -> list[Contract]:
    """The contracts whose case files name them with a `contract:` key: all but the
    normalizer's."""
    from conformance.contracts import registered

    return [entry for entry in registered() if entry.NAME != NORMALIZER]


def load_file(
    path: Path, parsed: filecache.ParsedFiles | None = None
) -> tuple[list[CaseIdentity], list[CaseFileProblem]]:
    """The cases of one file and its problems. With `parsed`, a file whose exact text
    loaded without problems before is built from what was remembered of it."""
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as error:
        return [], [CaseFileProblem(path, 0, f"cannot read the file: {error}")]
    known = parsed.get(text) if parsed is not None else None
    if known is not None:
        data, remembered = known
        if "contract" in data:
            return _contract_cases(data, path, lambda index: remembered[index]), []
        return _cases(data, path, set(), lambda index, *at: _remembered(remembered[index], at))
    cases, errors, data, line_at = _parse(path, text)
    if parsed is not None and not errors and line_at is not None:
        if "contract" in data:
            lines: list[Any] = [line_at(index) for index in range(len(data["cases"]))]
        else:
            lines = [
                [
                    line_at(index),
                    [line_at(index, "variants", n) for n in range(len(raw.get("variants", ())))],
                    line_at(index, "cassette") if "cassette" in raw else 0,
                ]
                for index, raw in enumerate(data["cases"])
            ]
        parsed.put(text, data, lines)
    return cases, errors


def _remembered(lines: list[Any], at: tuple[Any, ...]) -> int:
    """The line of a case (`at` empty), of one of its variants, or of its cassette key."""
    if not at:
        return lines[0]
    return lines[1][at[1]] if at[0] == "variants" else lines[2]


Parsed = tuple[list[CaseIdentity], list[CaseFileProblem], Any, Callable[..., int] | None]


def _parse(path: Path, text: str) -> Parsed:
    """Cases, problems, the file's data and a function giving the line of a case's key."""
    errors = [CaseFileProblem(path, line, message) for line, message in invisible_characters(text)]
    try:
        loader = _Loader(text)
        try:
            node = loader.get_single_node()
            shape = shape_problems(node) if node is not None else []
            fatal = any(line_problem[2] for line_problem in shape)
            data = loader.construct_document(node) if node is not None and not fatal else None
        finally:
            loader.dispose()
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 0
        problem = getattr(error, "problem", None) or str(error)
        errors.append(CaseFileProblem(path, line, f"malformed YAML: {problem}; fix the syntax"))
        return [], errors, None, None
    except RecursionError:
        errors.append(CaseFileProblem(path, 0, f"nested deeper than {MAX_DEPTH} levels"))
        return [], errors, None, None
    if node is None:
        empty = "the file is empty; a case file needs `category:` and `cases:`"
        return [], [*errors, CaseFileProblem(path, 1, empty)], None, None
    errors += [CaseFileProblem(path, line, message) for line, message, _ in shape]
    if fatal:
        return [], errors, None, None
    line_at = functools.partial(_line_in_case, node)
    contract = data.get("contract") if isinstance(data, dict) else None
    if isinstance(data, dict) and contract is not None:
        return _checked_contract_cases(data, node, path, text, errors), errors, data, line_at
    schema_errors = validation.schema_errors(schema("case-file.schema.json"), data, text)
    for invalid in schema_errors:
        errors.append(
            CaseFileProblem(path, line_of(node, invalid.absolute_path), describe(invalid))
        )
    bad = {tuple(e.absolute_path)[:2] for e in schema_errors}
    if any(len(p) < 2 for p in bad):
        return [], errors, data, line_at
    assert isinstance(data, dict)  # the schema requires a mapping: a top-level error above
    cases, problems = _cases(data, path, bad, line_at)
    return cases, errors + problems, data, line_at


def _cases(
    data: Mapping[str, Any], path: Path, bad: set[Any], line_at: Callable[..., int]
) -> tuple[list[CaseIdentity], list[CaseFileProblem]]:
    """The cases of a normalizer case file's data but those at `bad` paths;
    `line_at(index, *keys)` is the line of a case or of a key in it."""
    cases: list[CaseIdentity] = []
    errors = []
    for index, raw in enumerate(data["cases"]):
        if ("cases", index) in bad:
            continue
        at_case = functools.partial(line_at, index)
        chunks = _chunks(raw, path, at_case)
        if isinstance(chunks, CaseFileProblem):
            errors.append(chunks)
            continue
        cases.append(_case(raw, data["category"], path, at_case, *chunks))
    return cases, errors


def _checked_contract_cases(
    data: Mapping[str, Any], node: yaml.Node, path: Path, text: str, errors: list[CaseFileProblem]
) -> list[CaseIdentity]:
    """The cases of a file of another contract, validated by that contract's schema; its
    problems are added to `errors`."""
    name = data["contract"]
    keyed = {entry.NAME: entry for entry in _keyed_contracts()}
    known = list(keyed)
    if name not in known:
        errors.append(
            CaseFileProblem(
                path,
                line_of(node, ["contract"]),
                f"unknown contract {name!r}; the contracts are {', '.join(known)} "
                "(or none: normalizer)",
            )
        )
        return []
    own = keyed[name].SCHEMA
    schema_errors = validation.schema_errors(
        schema(own) if isinstance(own, str) else own, data, text
    )
    for error in schema_errors:
        errors.append(CaseFileProblem(path, line_of(node, error.absolute_path), describe(error)))
    bad = {tuple(e.absolute_path)[:2] for e in schema_errors}
    if any(len(p) < 2 for p in bad):
        return []
    return _contract_cases(data, path, lambda index: line_of(node, ["cases", index]), bad)


def _contract_cases(
    data: Mapping[str, Any],
    path: Path,
    line_at: Callable[[int], int],
    bad: set[Any] | None = None,
) -> list[CaseIdentity]:
    return [
        ContractCase(
            id=raw["id"],
            slug=raw["slug"],
            title=raw["title"],
            taxonomy=raw["taxonomy"],
            level=raw["level"],
            category=data["category"],
            contract=data["contract"],
            input=raw["input"],
            expected=raw["expected"],
            provenance=tuple(Provenance(**p) for p in raw["provenance"]),
            source=raw.get("source"),
            note=raw.get("note"),
            file=path,
            line=line_at(index),
        )
        for index, raw in enumerate(data["cases"])
        if not bad or ("cases", index) not in bad
    ]


def _chunks(
    raw: Mapping[str, Any], path: Path, line_at: Callable[..., int]
) -> tuple[tuple[Chunk, ...], CassetteRef | None] | CaseFileProblem:
    """The case's inline chunks, or those decoded from its cassette."""
    if "cassette" not in raw:
        return tuple(_chunk(c) for c in raw["chunks"]), None
    from conformance.cassettes import CassetteError, cassettes_dir_for, chunks_for_case

    ref = CassetteRef(
        raw["cassette"],
        cassettes_dir_for(path) / raw["cassette"],
        raw.get("interaction", 0),
        raw.get("family"),
    )
    try:
        chunks = filecache.cassette_chunks(ref.path, ref.interaction, ref.family, chunks_for_case)
        return chunks, ref
    except CassetteError as error:
        return CaseFileProblem(path, line_at("cassette"), f"{raw['id']}: {error}")


def _case(
    raw: Mapping[str, Any],
    category: str,
    path: Path,
    line_at: Callable[..., int],
    chunks: tuple[Chunk, ...],
    cassette: CassetteRef | None,
) -> Case:
    return Case(
        id=raw["id"],
        slug=raw["slug"],
        title=raw["title"],
        taxonomy=raw["taxonomy"],
        level=raw["level"],
        category=category,
        chunks=chunks,
        expected=_channels(raw["expected"]),
        whole=_channels(raw["whole"]) if "whole" in raw else None,
        variants=tuple(
            Variant(
                when=dict(v["when"]),
                expected=_channels(v["expected"]) if "expected" in v else None,
                whole=_channels(v["whole"]) if "whole" in v else None,
                undefined=v.get("undefined"),
                note=v.get("note"),
                line=line_at("variants", number),
            )
            for number, v in enumerate(raw.get("variants", ()))
        ),
        provenance=tuple(Provenance(**p) for p in raw["provenance"]),
        source=raw.get("source"),
        note=raw.get("note"),
        file=path,
        line=line_at(),
        cassette=cassette,
        pending=raw.get("pending", False),
    )


def case_from_mapping(raw: Mapping[str, Any], category: str = "generated") -> Case:
    """A case with inline chunks built from a mapping in case-file shape, not read from a
    file: for proposing new cases (the fuzzer's findings, approved captures)."""
    chunks = tuple(_chunk(c) for c in raw["chunks"])
    return _case(raw, category, Path("<generated>"), lambda *_: 0, chunks, None)


def _line_in_case(node: yaml.Node, index: int, *path: Any) -> int:
    return line_of(node, ["cases", index, *path])


def _chunk(raw: str | Mapping[str, Any]) -> Chunk:
    if isinstance(raw, str):
        return Chunk(content=raw)
    return Chunk(content=raw.get("content"), reasoning=raw.get("reasoning"))


def _channels(raw: Mapping[str, str]) -> Channels:
    return Channels(assistant=raw["assistant"], thinking=raw["thinking"])
