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
from pathlib import Path
from typing import TYPE_CHECKING, Any

from conformance._version import __version__

if TYPE_CHECKING:
    import jsonschema


def cache_dir() -> Path | None:
    setting = os.environ.get("CONFORMANCE_CACHE_DIR")
    if setting == "off":
        return None
    if setting:
        return Path(setting)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "reasoning-conformance"


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
    digest.update(json.dumps(schema, sort_keys=True).encode())
    digest.update(text.encode("utf-8", "surrogatepass"))
    directory = cache_dir()
    marker = directory / "valid" / digest.hexdigest() if directory else None
    if marker is not None and marker.exists():
        return []
    import jsonschema  # only now: a run whose files are all known valid never needs it

    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
    if marker is not None and not errors:
        try:
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.touch()
        except OSError:  # a read-only home is no reason to fail a run
            pass
    return errors
