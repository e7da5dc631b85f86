"""Case files and decoded cassettes, remembered per content.

Building the Python objects of a case file's YAML (PyYAML does that in Python even with
libyaml), checking its shape and characters, validating it, and decoding a recorded
provider response into chunks are most of what loading the corpus costs, and the corpus
rarely changes between runs. So, in the cache directory of `validation` (the same setting
turns it off):

- a case file whose exact text loaded without a single problem is remembered as JSON: its
  data and the line of each case, variant and cassette reference;
- a cassette's chunks are remembered as JSON, by the cassette's exact bytes, interaction and
  wire family.

Each record's name is a digest of its input and of everything its result depends on: this
package's version and the source of the modules that read, check and decode (so editing a
decoder or a check forgets what they produced), the schemas, PyYAML's version. A file with a
problem is never remembered: it is read, and its problems reported, every time. Records are
written atomically; one that cannot be read is ignored.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conformance._cache import cache_dir
from conformance._version import __version__
from conformance.model.chunks import Chunk

_PACKAGE = Path(__file__).resolve().parent.parent


def _stamp(paths: list[Path]) -> str:
    """Which source is in use: each file's name, size and modification time."""
    parts = []
    for path in sorted(paths):
        try:
            stat = path.stat()
        except OSError:
            continue
        parts.append(f"{path.relative_to(_PACKAGE)}:{stat.st_size}:{stat.st_mtime_ns}")
    return ";".join(parts)


@functools.cache
def _decoder_salt() -> bytes:
    sources = [*(_PACKAGE / "cassettes").glob("*.py"), _PACKAGE / "model" / "chunks.py"]
    return f"chunks {__version__} {_stamp(sources)}".encode()


def _record(kind: str, digest: str) -> Path | None:
    directory = cache_dir()
    return directory / kind / f"{digest}.json" if directory else None


def _read(path: Path | None) -> Any:
    if path is None:
        return None
    try:
        return json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None


def _write(path: Path | None, value: Any) -> None:
    if path is None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=".", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as file:
                json.dump(value, file)
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
    except (OSError, ValueError, TypeError):  # a read-only home is no reason to fail a run
        pass


def cassette_chunks(
    path: Path,
    interaction: int,
    family: str | None,
    decode: Callable[[Path, int, str | None], tuple[Chunk, ...]],
) -> tuple[Chunk, ...]:
    """`decode(path, interaction, family)`, remembered by the cassette's bytes. Errors (a
    missing or undecodable cassette) come from `decode`, every time."""
    try:
        data = path.read_bytes()
    except OSError:
        return decode(path, interaction, family)
    digest = hashlib.sha256(_decoder_salt())
    digest.update(f" {interaction} {family}\n".encode())
    digest.update(data)
    record = _record("chunks", digest.hexdigest())
    found = _read(record)
    if isinstance(found, list):
        return tuple(Chunk(content, reasoning) for content, reasoning in found)
    chunks = decode(path, interaction, family)
    _write(record, [[chunk.content, chunk.reasoning] for chunk in chunks])
    return chunks


class ParsedFiles:
    """Case files by the digest of their text and of what loading them depends on."""

    def __init__(self, salt: bytes) -> None:
        self.salt = salt

    def _record(self, text: str) -> Path | None:
        digest = hashlib.sha256(self.salt)
        digest.update(text.encode("utf-8", "surrogatepass"))
        return _record("parsed", digest.hexdigest())

    def get(self, text: str) -> tuple[Any, list[Any]] | None:
        """(data, lines) of a file remembered as loading without problems, or None."""
        found = _read(self._record(text))
        if isinstance(found, dict) and "data" in found and isinstance(found.get("lines"), list):
            return found["data"], found["lines"]
        return None

    def put(self, text: str, data: Any, lines: list[Any]) -> None:
        """Remember a file that loaded without problems, if JSON gives its data back
        exactly (YAML can hold what JSON cannot: then it is loaded from YAML every time)."""
        try:
            exact = json.loads(json.dumps(data)) == data
        except (TypeError, ValueError):
            return
        if exact:
            _write(self._record(text), {"data": data, "lines": lines})


def loader_salt(schemas: Any) -> bytes:
    """What a clean load of a case file depends on besides its text."""
    import yaml  # already imported by whoever reads case files

    sources = [*(_PACKAGE / "corpus").glob("*.py")]
    text = json.dumps(schemas, sort_keys=True, default=str)
    return f"parsed {__version__} pyyaml {yaml.__version__} {_stamp(sources)} {text}".encode()
