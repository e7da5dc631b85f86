"""What the matrix keeps of one implementation, as JSON that gives back the very objects.

The matrix cache and a CI job's `--results-out` directory hold, per implementation, its
results, fingerprint, growth check and benchmark figures. They are written as JSON (never
pickle: a results directory may come from another machine) with a small typed encoding, so
that reading them back gives objects equal to those written, float for float, and a report
rendered from them is the report the run would have rendered:

- a dataclass of the allowed types is `{"$": "Name", field: value, ...}`, made back
  without running its `__init__` (ImplementationInfo clips what it is given; clipping twice
  is not clipping once);
- a tuple is `{"$t": [...]}`, a mapping `{"$m": {...}}` (string keys), a verdict `{"$v": ...}`.

Any other `$` name is refused: nothing but these plain data types is ever built.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from conformance.errors import UsageError
from conformance.model.chunks import Channels, Chunk
from conformance.model.results import CaseResult, ImplementationInfo, Verdict
from conformance.tools.bench_figures import BenchResult, Growth, Holdback, Throughput
from conformance.tools.fingerprint import Fingerprint
from conformance.tools.fingerprint_results import AxisResult, ProbeResult

_TYPES: dict[str, type] = {
    cls.__name__: cls
    for cls in (
        AxisResult,
        BenchResult,
        CaseResult,
        Channels,
        Chunk,
        Fingerprint,
        Growth,
        Holdback,
        ImplementationInfo,
        ProbeResult,
        Throughput,
    )
}


class CodecError(UsageError):
    """A stored entry is not what this version writes (exit status 2)."""


def encode(value: Any) -> Any:
    if isinstance(value, Verdict):  # before str: a verdict is one
        return {"$v": value.value}
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        name = type(value).__name__
        if _TYPES.get(name) is not type(value):
            raise CodecError(f"cannot store a {name}")
        fields = {f.name: encode(getattr(value, f.name)) for f in dataclasses.fields(value)}
        return {"$": name, **fields}
    if isinstance(value, tuple):
        return {"$t": [encode(item) for item in value]}
    if isinstance(value, list):
        return [encode(item) for item in value]
    if isinstance(value, Mapping):
        if not all(isinstance(key, str) for key in value):
            raise CodecError(f"cannot store a mapping with keys that are not text: {value!r}")
        return {"$m": {key: encode(item) for key, item in value.items()}}
    raise CodecError(f"cannot store a {type(value).__name__}")


def decode(data: Any) -> Any:
    if type(data) in _PLAIN:
        return data
    if isinstance(data, list):
        return [decode(item) for item in data]
    if not isinstance(data, dict):
        return data
    name = data.get("$")  # the common case first: a stored result
    if name is None:
        if "$v" in data:
            return _VERDICTS[data["$v"]]
        if "$t" in data:
            return tuple(decode(item) for item in data["$t"])
        if "$m" in data:
            return {key: decode(item) for key, item in data["$m"].items()}
    cls = _TYPES.get(name or "")
    if cls is None:
        raise CodecError(f"not a stored object: {str(data)[:80]}")
    made: Any = object.__new__(cls)
    for name in _FIELDS[cls]:
        try:
            value = data[name]
        except KeyError:
            raise CodecError(f"a stored {cls.__name__} lacks {name}") from None
        # Most fields are plain text or numbers: taken as they are, without a call.
        object.__setattr__(made, name, value if type(value) in _PLAIN else decode(value))
    return made


#: What decodes to itself. A stored entry holds hundreds of thousands of fields.
_PLAIN = frozenset({str, int, float, bool, type(None)})
_FIELDS = {cls: tuple(field.name for field in dataclasses.fields(cls)) for cls in _TYPES.values()}
#: A verdict by its value, without the enum's call.
_VERDICTS = {verdict.value: verdict for verdict in Verdict}
