"""One recorded exchange in the plain form the rest of the package reads (`RawExchange`),
and what every capture format needs to reach it: headers, base64 bodies, and undoing a
binary body's Content-Encoding (gzip, deflate, br)."""

from __future__ import annotations

import base64
import binascii
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from conformance.errors import UsageError

_T = TypeVar("_T")


class FormatProblem(UsageError):
    """The file is not a capture this module reads, or one of its interactions is broken;
    the loader makes a CassetteError of it (exit status 2)."""

    def __init__(self, message: str, interaction: int | None = None) -> None:
        self.message = message
        self.interaction = interaction
        super().__init__(message)


@dataclass(slots=True)
class RawExchange:
    method: str
    uri: str
    request_headers: dict[str, list[str]]
    request_body: bytes | None
    status: int
    reason: str
    response_headers: dict[str, list[str]]
    body: bytes
    #: How the response body was stored: text, binary (!!binary or base64), or parsed_body.
    stored_as: str = "text"
    #: Content encodings undone while reading (e.g. ["gzip"]).
    decompressed: list[str] = field(default_factory=list)


@dataclass(slots=True)
class Capture:
    format: str
    exchanges: list[RawExchange]
    metadata: Mapping[str, Any]


def read_each(items: list[Any], read: Callable[[Any], _T], what: str, has: str) -> list[_T]:
    """`read` applied to each item; the first that fails, a FormatProblem at its index:
    `not <what> (...); each has <has>` when its shape is wrong."""
    read_items = []
    for index, item in enumerate(items):
        try:
            read_items.append(read(item))
        except FormatProblem as problem:
            raise FormatProblem(problem.message, index) from None
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            raise FormatProblem(
                f"not {what} ({type(error).__name__}: {error}); each has {has}", index
            ) from None
    return read_items


def base64_body(value: Any, which: str) -> bytes:
    try:
        return base64.b64decode(str(value), validate=False)
    except (binascii.Error, ValueError) as error:
        raise FormatProblem(f"the {which} body is not valid base64: {error}") from None


def headers_of(raw: Any) -> dict[str, list[str]]:
    headers: dict[str, list[str]] = {}
    if raw is None:
        return headers
    if isinstance(raw, list):  # HAR: [{name, value}, ...]
        for item in raw:
            if isinstance(item, Mapping) and "name" in item:
                headers.setdefault(str(item["name"]).lower(), []).append(
                    as_text(item.get("value", ""))
                )
        return headers
    if not isinstance(raw, Mapping):
        raise FormatProblem(f"headers must be a mapping, not {type(raw).__name__}")
    for name, value in raw.items():
        values = value if isinstance(value, list | tuple) else [value]
        headers.setdefault(as_text(name).lower(), []).extend(as_text(v) for v in values)
    return headers


def as_text(value: Any) -> str:
    if isinstance(value, bytes):  # vcrpy stores some botocore headers as !!binary
        return value.decode("utf-8", "replace")
    return "" if value is None else str(value)


def decompress(exchange: RawExchange, *, binary: bool, lenient: bool = False) -> None:
    """Undo the response's Content-Encoding on a binary body. A text body was stored
    decoded already (text cannot hold compressed bytes), so it is left as it is.
    `lenient` (HAR, whose bodies are decoded by definition): keep a body that does not
    decompress."""
    codings = [
        c.strip().lower()
        for value in exchange.response_headers.get("content-encoding", [])
        for c in value.split(",")
        if c.strip() and c.strip().lower() != "identity"
    ]
    if not codings or not binary:
        return
    body = exchange.body
    done = []
    for coding in reversed(codings):
        try:
            body = _undo(coding, body)
        except _NotEncoded as error:
            if lenient:
                return
            raise FormatProblem(
                f"the response says Content-Encoding {coding}, but its body {error}"
            ) from None
        done.append(coding)
    exchange.body = body
    exchange.decompressed = done


class _NotEncoded(UsageError):
    """A body that its content-encoding does not describe; it becomes a FormatProblem (exit
    status 2)."""


def _undo(coding: str, body: bytes) -> bytes:
    if coding in ("gzip", "x-gzip"):
        try:
            return zlib.decompress(body, 16 + zlib.MAX_WBITS)
        except zlib.error as error:
            raise _NotEncoded(f"is not gzip data ({error})") from None
    if coding == "deflate":
        for wbits in (zlib.MAX_WBITS, -zlib.MAX_WBITS):  # zlib-wrapped, then raw deflate
            try:
                return zlib.decompress(body, wbits)
            except zlib.error:
                continue
        raise _NotEncoded("is not deflate data")
    if coding == "br":
        try:
            import brotli
        except ImportError:  # pragma: no cover - brotli is a dependency
            raise _NotEncoded("needs the brotli package to decompress") from None
        try:
            return bytes(brotli.decompress(body))
        except brotli.error as error:
            raise _NotEncoded(f"is not brotli data ({error})") from None
    if coding == "zstd":
        raise _NotEncoded("is zstd, which this suite does not decompress yet")
    raise _NotEncoded(f"uses an encoding this suite does not know ({coding!r})")
