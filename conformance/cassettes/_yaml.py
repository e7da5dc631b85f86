"""vcrpy's YAML cassette serializer, writing bodies so that a reviewer can read them; and
reading YAML and JSON documents with the alias and depth guards of case files.

Loading is vcrpy's own (its safe loader). Writing differs only in layout: multi-line strings
(SSE and NDJSON bodies) are written as literal blocks where YAML allows it and non-ASCII text
as itself, so a new capture reviews as a readable diff. Strings a literal block cannot hold
exactly (CR line endings, trailing blanks, control characters) stay double-quoted with
escapes, which is also what keeps them byte-exact.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterator
from typing import Any

import yaml

from conformance.errors import UsageError
from conformance.model.characters import COMBINING, INVISIBLE

try:  # libyaml when available, as vcrpy does
    from yaml import CSafeDumper as _BaseDumper
    from yaml import CSafeLoader as _SafeLoader
except ImportError:  # pragma: no cover - depends on how PyYAML was built
    from yaml import SafeDumper as _BaseDumper  # type: ignore[assignment]
    from yaml import SafeLoader as _SafeLoader  # type: ignore[assignment]


class _ReadableDumper(_BaseDumper):
    pass


def _represent_str(dumper: _ReadableDumper, text: str) -> yaml.ScalarNode:
    # PyYAML falls back to a quoted style by itself when a literal block cannot hold `text`.
    style = "|" if "\n" in text else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


_ReadableDumper.add_representer(str, _represent_str)


def deserialize(cassette_string: str) -> Any:
    from vcr.serializers import yamlserializer  # vcrpy is heavy to import: only when used

    return yamlserializer.deserialize(cassette_string)


def serialize(cassette_dict: Any) -> str:
    # A character a reader cannot see must not be written as itself: then every non-ASCII
    # character is escaped, which YAML can only do for the whole document.
    readable = not any(_invisible(text) for text in _strings(cassette_dict))
    return yaml.dump(
        cassette_dict, Dumper=_ReadableDumper, allow_unicode=readable, sort_keys=False, width=100
    )


#: Written escaped, never as themselves: what a reader cannot see, and combining marks.
_UNSEEN = INVISIBLE | COMBINING


def _invisible(text: str) -> bool:
    return any(not char.isascii() and unicodedata.category(char) in _UNSEEN for char in text)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(key)
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


#: The name it is registered under on a `vcr.VCR`.
NAME = "readable-yaml"


# ----------------------------------------------------------------------------- reading

#: Captures, case files and expectation files are shallow (about six to ten levels);
#: anything much deeper is a mistake or an attack, and walking it recursively would end in
#: a RecursionError.
MAX_DEPTH = 32


class ShapeProblem(UsageError):
    """A document refused before it is built: an alias, or nesting deeper than MAX_DEPTH.
    Exit status 2; raised again as CassetteError for a capture, UsageError for an
    expectation file."""

    def __init__(self, line: int, message: str) -> None:
        self.line = line
        self.message = message
        super().__init__(f"line {line}: {message}" if line else message)


def alias_or_depth(root: yaml.Node) -> tuple[int, str] | None:
    """(line, message) for the first alias or the first node nested deeper than MAX_DEPTH
    in a composed document, or None. An alias (`*name`) is refused at its first reuse: a
    few lines of them can expand to billions of nodes, so nothing may expand it first.
    Iterative, visiting each node once."""
    seen: set[int] = set()
    stack: list[tuple[yaml.Node, int]] = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        line = node.start_mark.line + 1
        if id(node) in seen:
            return line, "YAML aliases (*name) are not allowed; write the value out"
        seen.add(id(node))
        if depth > MAX_DEPTH:
            return line, f"nested deeper than {MAX_DEPTH} levels"
        if isinstance(node, yaml.MappingNode):
            stack.extend((value, depth + 1) for _, value in node.value)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((item, depth + 1) for item in node.value)
    return None


def guarded_load(text: str) -> Any:
    """A YAML document (JSON included) read with the safe loader, refusing aliases and deep
    nesting (ShapeProblem) before anything is built from it. Raises yaml.YAMLError for bad
    syntax."""
    loader = _SafeLoader(text)
    try:
        try:
            node = loader.get_single_node()
        except RecursionError:
            raise ShapeProblem(0, f"nested deeper than {MAX_DEPTH} levels") from None
        if node is None:
            return None
        problem = alias_or_depth(node)
        if problem is not None:
            raise ShapeProblem(*problem)
        return loader.construct_document(node)
    finally:
        loader.dispose()


def guarded_json(text: str) -> Any:
    """A JSON document, refusing nesting deeper than MAX_DEPTH (ShapeProblem). Raises
    ValueError for bad syntax."""
    try:
        document = json.loads(text)
    except RecursionError:
        raise ShapeProblem(0, f"nested deeper than {MAX_DEPTH} levels") from None
    stack: list[tuple[Any, int]] = [(document, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise ShapeProblem(0, f"nested deeper than {MAX_DEPTH} levels")
        if isinstance(value, dict):
            stack.extend((child, depth + 1) for child in value.values())
        elif isinstance(value, list):
            stack.extend((child, depth + 1) for child in value)
    return document
