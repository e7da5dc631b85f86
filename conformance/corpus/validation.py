"""Schema validation of case files, remembered per content.

jsonschema is most of the cost of loading the corpus, and the corpus rarely changes between
runs: a file whose exact text was found valid against the exact schema is not validated
again. The record is an empty file named by a digest of both, in the user's cache directory
(`$CONFORMANCE_CACHE_DIR`, else `$XDG_CACHE_HOME/reasoning-conformance`, else
`~/.cache/reasoning-conformance`; `CONFORMANCE_CACHE_DIR=off` turns it off). Problems are
never cached: an invalid file is validated, and reported, every time.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from collections.abc import Mapping
from importlib import util
from typing import TYPE_CHECKING, Any

from conformance._cache import cache_dir
from conformance._version import __version__

if TYPE_CHECKING:
    import jsonschema


@functools.cache
def _salt() -> bytes:
    """What validity depends on besides the file and the schema: this version, and the
    installed jsonschema (found without importing it or `importlib.metadata`, both slow to
    import: where it is and when it was installed)."""
    spec = util.find_spec("jsonschema")
    origin = spec.origin if spec is not None and spec.origin else ""
    stamp = os.stat(origin).st_mtime_ns if origin else 0
    return f"{__version__} jsonschema {origin} {stamp}".encode()


def schema_errors(
    schema: Mapping[str, Any], data: Any, text: str
) -> list[jsonschema.ValidationError]:
    """The errors of `data` (parsed from `text`) against `schema`, in document order."""
    digest = hashlib.sha256(_salt())
    schema_text = json.dumps(schema, sort_keys=True)
    digest.update(schema_text.encode())
    digest.update(text.encode("utf-8", "surrogatepass"))
    directory = cache_dir()
    marker = directory / "valid" / digest.hexdigest() if directory else None
    if marker is not None and marker.exists():
        return []
    validator = _VALIDATORS.get(schema_text)
    if validator is None:
        import jsonschema  # only now: a run whose files are all known valid never needs it

        # Its keywords in the schema's own order, which is the order of the errors at a place.
        validator = _VALIDATORS[schema_text] = jsonschema.Draft202012Validator(inlined(schema))
    errors = _errors(validator, data)
    if marker is not None and not errors:
        try:
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.touch()
        except OSError:  # a read-only home is no reason to fail a run
            pass
    return errors


def _errors(validator: jsonschema.Draft202012Validator, data: Any) -> list[Any]:
    """Every error of `data`, in document order."""
    return sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))


#: A validator per schema (by its text), made once per process.
_VALIDATORS: dict[str, jsonschema.Draft202012Validator] = {}


#: Keywords whose values are data, not subschemas: a `$ref` there is not a reference.
_DATA = frozenset({"const", "enum", "default", "examples"})


def inlined(schema: Mapping[str, Any]) -> Mapping[str, Any]:
    """The schema with each reference to one of its own `$defs` (a `$ref` alone in its
    object) replaced by the definition: the same validation, without resolving a reference at
    every place of every document it checks (a third of the time of validating a long run's
    results). A schema whose definitions refer to themselves is returned as it is."""
    defs = schema.get("$defs")
    if not isinstance(defs, dict):
        return schema
    recursive: list[str] = []

    def expand(node: Any, within: frozenset[str]) -> Any:
        if isinstance(node, list):
            return [expand(item, within) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if len(node) == 1 and isinstance(ref, str) and ref.startswith("#/$defs/"):
            name = ref[len("#/$defs/") :]
            if name in within or name not in defs:
                recursive.append(name)
                return node
            return expand(defs[name], within | {name})
        return {
            key: value if key in _DATA or key == "$defs" else expand(value, within)
            for key, value in node.items()
        }

    expanded: Mapping[str, Any] = expand(schema, frozenset())
    return schema if recursive else expanded
