"""What a case file's text and YAML must not hold, and where in the file a problem is."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

import yaml

if TYPE_CHECKING:
    import jsonschema


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


def shape_problems(root: yaml.Node) -> list[tuple[int, str, bool]]:
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
                if not isinstance(key, yaml.ScalarNode):
                    # `? [a, b]` keys a mapping by a list: no case file means it, and the
                    # loader could not hash it.
                    message = "a mapping key must be a plain value, not a list or a mapping"
                    problems.append((key.start_mark.line + 1, message, True))
                    continue
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


_ASCII_CONTROL = re.compile("[\x00-\x1f\x7f]")


def invisible_characters(text: str) -> Iterator[tuple[int, str]]:
    """Characters a reader cannot see must be written as escapes in double-quoted strings."""
    for number, line in enumerate(text.split("\n"), start=1):
        # In ASCII only the control characters are invisible (the space is allowed): most
        # lines are decided by two C-speed tests instead of a look-up per character.
        if line.isascii() and not _ASCII_CONTROL.search(line):
            continue
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
