"""vcrpy's YAML cassette serializer, writing bodies so that a reviewer can read them.

Loading is vcrpy's own (its safe loader). Writing differs only in layout: multi-line strings
(SSE and NDJSON bodies) are written as literal blocks where YAML allows it and non-ASCII text
as itself, so a new capture reviews as a readable diff. Strings a literal block cannot hold
exactly (CR line endings, trailing blanks, control characters) stay double-quoted with
escapes, which is also what keeps them byte-exact.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator
from typing import Any

import yaml

from conformance.model.characters import COMBINING, INVISIBLE

try:  # libyaml when available, as vcrpy does
    from yaml import CSafeDumper as _BaseDumper
except ImportError:  # pragma: no cover - depends on how PyYAML was built
    from yaml import SafeDumper as _BaseDumper  # type: ignore[assignment]


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
