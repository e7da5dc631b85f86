"""Case files -> validated, frozen cases. Knows nothing of runners or reports."""

from __future__ import annotations

import functools
import json
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import yaml

try:  # libyaml's parser when PyYAML was built with it: several times faster
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - depends on how PyYAML was built
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

from conformance.corpus import validation
from conformance.corpus.model import (
    LEVELS,
    PENDING_REVIEW,
    Case,
    CaseFileError,
    CaseIdentity,
    CassetteRef,
    ContractCase,
    Corpus,
    Derivation,
    Expectation,
    Provenance,
    Variant,
)
from conformance.model.chunks import Channels, Chunk

__all__ = [
    "LEVELS",
    "PENDING_REVIEW",
    "Case",
    "CaseFileError",
    "CaseIdentity",
    "CassetteRef",
    "ContractCase",
    "Corpus",
    "Derivation",
    "Expectation",
    "Provenance",
    "Variant",
    "bundled_cases_dir",
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
    cases: list[Case | ContractCase] = []
    errors: list[CaseFileError] = []
    for path in files:
        file_cases, file_errors = load_file(path)
        cases += file_cases
        errors += file_errors
    return Corpus(tuple(cases), tuple(errors), tuple(files))


def load_file(path: Path) -> tuple[list[Case | ContractCase], list[CaseFileError]]:
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as error:
        return [], [CaseFileError(path, 0, f"cannot read the file: {error}")]
    errors = [CaseFileError(path, line, message) for line, message in invisible_characters(text)]
    try:
        loader = _Loader(text)
        try:
            node = loader.get_single_node()
            shape = _shape_problems(node) if node is not None else []
            fatal = any(line_problem[2] for line_problem in shape)
            data = loader.construct_document(node) if node is not None and not fatal else None
        finally:
            loader.dispose()
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 0
        problem = getattr(error, "problem", None) or str(error)
        errors.append(CaseFileError(path, line, f"malformed YAML: {problem}; fix the syntax"))
        return [], errors
    except RecursionError:
        errors.append(CaseFileError(path, 0, f"nested deeper than {MAX_DEPTH} levels"))
        return [], errors
    if node is None:
        return [], [
            *errors,
            CaseFileError(path, 1, "the file is empty; a case file needs `category:` and `cases:`"),
        ]
    errors += [CaseFileError(path, line, message) for line, message, _ in shape]
    if fatal:
        return [], errors
    contract = data.get("contract") if isinstance(data, dict) else None
    if contract is not None:
        return _contract_cases(data, node, path, text, errors)
    schema_errors = validation.schema_errors(schema("case-file.schema.json"), data, text)
    for error in schema_errors:
        errors.append(CaseFileError(path, line_of(node, error.absolute_path), describe(error)))
    if schema_errors:
        bad = {tuple(e.absolute_path)[:2] for e in schema_errors}
        if any(len(p) < 2 for p in bad):
            return [], errors
    else:
        bad = set()
    cases = []
    for index, raw in enumerate(data["cases"]):
        if ("cases", index) in bad:
            continue
        at_case = functools.partial(_line_in_case, node, index)
        chunks = _chunks(raw, path, at_case)
        if isinstance(chunks, CaseFileError):
            errors.append(chunks)
            continue
        cases.append(_case(raw, data["category"], path, at_case, *chunks))
    return cases, errors


def _contract_cases(
    data: Mapping[str, Any], node: yaml.Node, path: Path, text: str, errors: list[CaseFileError]
) -> tuple[list[Any], list[CaseFileError]]:
    """The cases of a file of another contract, validated by that contract's schema."""
    from conformance.contracts import contract, names

    name = data["contract"]
    if name not in names():
        known = ", ".join(names())
        errors.append(
            CaseFileError(
                path,
                line_of(node, ["contract"]),
                f"unknown contract {name!r}; the contracts are {known} (or none: normalizer)",
            )
        )
        return [], errors
    own = contract(name).SCHEMA
    schema_errors = validation.schema_errors(
        schema(own) if isinstance(own, str) else own, data, text
    )
    for error in schema_errors:
        errors.append(CaseFileError(path, line_of(node, error.absolute_path), describe(error)))
    bad = {tuple(e.absolute_path)[:2] for e in schema_errors}
    if any(len(p) < 2 for p in bad):
        return [], errors
    cases = [
        ContractCase(
            id=raw["id"],
            slug=raw["slug"],
            title=raw["title"],
            taxonomy=raw["taxonomy"],
            level=raw["level"],
            category=data["category"],
            contract=name,
            input=raw["input"],
            expected=raw["expected"],
            provenance=tuple(Provenance(**p) for p in raw["provenance"]),
            note=raw.get("note"),
            file=path,
            line=line_of(node, ["cases", index]),
        )
        for index, raw in enumerate(data["cases"])
        if ("cases", index) not in bad
    ]
    return cases, errors


def _chunks(
    raw: Mapping[str, Any], path: Path, line_at: Callable[..., int]
) -> tuple[tuple[Chunk, ...], CassetteRef | None] | CaseFileError:
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
        return chunks_for_case(ref.path, ref.interaction, ref.family), ref
    except CassetteError as error:
        return CaseFileError(path, line_at("cassette"), f"{raw['id']}: {error}")


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


def describe(error: jsonschema.ValidationError) -> str:
    where = "/".join(str(p) for p in error.absolute_path) or "the file"
    if error.validator == "additionalProperties":
        return f"{where}: {error.message} (see conformance/schemas/case-file.schema.json)"
    if error.validator == "oneOf" and error.absolute_path and "variants" in error.absolute_path:
        return f"{where}: a variant needs exactly one of `expected` or `undefined`"
    if error.validator == "oneOf" and len(error.absolute_path) == 2:
        return (
            f"{where}: a case takes its input from exactly one of `chunks` or `cassette` "
            "(`interaction` and `family` go with `cassette`)"
        )
    return f"{where}: {error.message}"


def line_of(node: yaml.Node, path: Iterable[Any]) -> int:
    """The 1-based line of the node at `path` (keys and indices), or of its nearest parent."""
    for step in path:
        if isinstance(node, yaml.MappingNode):
            found = next((v for k, v in node.value if k.value == step), None)
        elif isinstance(node, yaml.SequenceNode) and isinstance(step, int):
            found = node.value[step] if step < len(node.value) else None
        else:
            found = None
        if found is None:
            break
        node = found
    return node.start_mark.line + 1


#: Case files are shallow (about six levels); anything much deeper is a mistake or an attack.
MAX_DEPTH = 32


def _shape_problems(root: yaml.Node) -> list[tuple[int, str, bool]]:
    """(line, message, fatal) for what a case file must not hold: duplicate keys (PyYAML
    keeps the last silently), aliases (`*name`: a few lines can expand to billions of
    nodes, so the file is refused before anything expands it) and deep nesting.

    One walk over the composed nodes, iterative and visiting each node once."""
    problems: list[tuple[int, str, bool]] = []
    seen: set[int] = set()
    stack: list[tuple[yaml.Node, int]] = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        line = node.start_mark.line + 1
        if id(node) in seen:
            # The first reuse is enough: a bomb reuses its anchors millions of times.
            message = "YAML aliases (*name) are not allowed in case files; write the value out"
            return [*problems, (line, f"{message} (the anchor is here)", True)]
        seen.add(id(node))
        if depth > MAX_DEPTH:
            problems.append((line, f"nested deeper than {MAX_DEPTH} levels", True))
            continue
        if isinstance(node, yaml.MappingNode):
            keys: set[Any] = set()
            for key, value in node.value:
                if key.value in keys:
                    problems.append(
                        (key.start_mark.line + 1, f"duplicate key {key.value!r}", False)
                    )
                keys.add(key.value)
                stack.append((value, depth + 1))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((item, depth + 1) for item in node.value)
    return sorted(problems)


_INVISIBLE = {"Cc", "Cf", "Zs", "Zl", "Zp", "Mn", "Me", "Co", "Cs"}
#: Control characters have no Unicode name; these are the ones case files meet.
_CONTROL = {
    "\t": ("CHARACTER TABULATION", "\\t"),
    "\r": ("CARRIAGE RETURN", "\\r"),
    "\f": ("FORM FEED", "\\f"),
    "\v": ("LINE TABULATION", "\\v"),
}


def invisible_characters(text: str) -> Iterator[tuple[int, str]]:
    """Characters a reader cannot see must be written as escapes in double-quoted strings."""
    for number, line in enumerate(text.split("\n"), start=1):
        for char in line:
            if char != " " and unicodedata.category(char) in _INVISIBLE:
                code = f"\\u{ord(char):04x}" if ord(char) < 0x10000 else f"\\U{ord(char):08x}"
                name, code = _CONTROL.get(
                    char, (unicodedata.name(char, "a control character"), code)
                )
                yield (
                    number,
                    (
                        f"literal U+{ord(char):04X} ({name}): write it as the escape {code} "
                        "inside a double-quoted string"
                    ),
                )
                break
