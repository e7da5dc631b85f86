"""The Python interface of a normalizer, and adapters for the shapes normalizers come in.

`conformance run --impl python:package.module:attr` imports `attr`: a factory (a class or a
function) returning a fresh `StreamNormalizer` per stream. Chunks and deltas are plain dicts,
exactly as in the protocol: `{"content": str | None, "reasoning": str | None}` in,
`{"assistant": str, "thinking": str}` out.

Metadata and declared options come from the factory's `conformance` attribute, which the
`implementation` decorator sets:

    @implementation(name="mine", version="1.2", options={"matching": "tolerant"})
    class MyNormalizer:
        def feed(self, chunk): ...
        def finish(self): ...
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar, runtime_checkable

Chunk = Mapping[str, Any]
Delta = Mapping[str, str]


@runtime_checkable
class StreamNormalizer(Protocol):
    """One stream's normalizer: `feed` every chunk, then `finish` once.

    A normalizer may also offer `whole(content, reasoning) -> delta` for the non-streaming
    form; without it the harness feeds the whole message as a one-chunk stream.
    """

    def feed(self, chunk: Chunk) -> Delta: ...

    def finish(self) -> Delta: ...


Factory = Callable[[], StreamNormalizer]


@dataclass(frozen=True, slots=True)
class HttpCall:
    """One request for an http-capable client to make, as it was recorded."""

    #: `http://127.0.0.1:PORT`: where the client sends its request. Nothing listens there:
    #: vcrpy answers, so a request that escapes it fails instead of reaching a provider.
    base_url: str
    #: The recorded path and query (secrets were scrubbed when it was recorded).
    path: str
    method: str
    #: The recorded request headers, names lowercased.
    headers: Mapping[str, str]
    #: The recorded request body.
    body: bytes | None
    #: The wire family (docs/cassettes.md) and whether the response streams.
    family: str
    stream: bool

    @property
    def url(self) -> str:
        return self.base_url + self.path

    def json(self) -> Any:
        """The recorded request body as JSON (None without a body)."""
        return json.loads(self.body) if self.body else None


F = TypeVar("F", bound=Callable[..., Any])


def implementation(
    *,
    name: str,
    version: str = "unknown",
    language: str = "python",
    options: Mapping[str, Any] | None = None,
    capabilities: Sequence[str] = (),
) -> Callable[[F], F]:
    """Attach metadata and declared options to a factory.

    `capabilities=["http"]` marks a client that makes its own HTTP requests: it is called
    with a `conformance.interface.HttpCall` instead of being fed chunks, and checked with
    `conformance replay` (docs/cassettes.md).
    """

    def attach(factory: F) -> F:
        factory.conformance = {  # type: ignore[attr-defined]
            "name": name,
            "version": version,
            "language": language,
            "options": dict(options or {}),
            "capabilities": list(capabilities),
        }
        return factory

    return attach


def metadata(factory: Callable[..., Any]) -> dict[str, Any]:
    """The metadata a factory declares; defaults derived from its name."""
    declared = getattr(factory, "conformance", None) or {}
    return {
        "name": declared.get("name", getattr(factory, "__qualname__", repr(factory))),
        "version": declared.get("version", "unknown"),
        "language": declared.get("language", "python"),
        "options": dict(declared.get("options", {})),
        "capabilities": list(declared.get("capabilities", [])),
    }


class _WholeText:
    """Streams by buffering: everything is released at `finish` (maximally late)."""

    def __init__(self, function: Callable[[str, str | None], Delta]) -> None:
        self._function = function
        self._content: list[str] = []
        self._reasoning: list[str] = []

    def feed(self, chunk: Chunk) -> Delta:
        if chunk.get("content"):
            self._content.append(chunk["content"])
        if chunk.get("reasoning"):
            self._reasoning.append(chunk["reasoning"])
        return {"assistant": "", "thinking": ""}

    def finish(self) -> Delta:
        return self.whole("".join(self._content), "".join(self._reasoning) or None)

    def whole(self, content: str | None, reasoning: str | None) -> Delta:
        result = self._function(content or "", reasoning)
        if isinstance(result, tuple):
            assistant, thinking = result
            return {"assistant": assistant, "thinking": thinking}
        return result


def from_function(function: Callable[[str, str | None], Any]) -> Factory:
    """Adapt a pure function over the whole message, `(content, reasoning) -> delta` or
    `-> (assistant, thinking)`. Streams are buffered to the end, so every stream check
    reports the holdback this costs."""

    def factory() -> StreamNormalizer:
        return _WholeText(function)

    factory.conformance = getattr(function, "conformance", None)  # type: ignore[attr-defined]
    factory.__qualname__ = getattr(function, "__qualname__", "function")
    return factory


class _Generator:
    """Drives a generator over chunks one chunk at a time."""

    _END = object()

    def __init__(self, function: Callable[[Iterator[Chunk]], Iterator[Delta]]) -> None:
        self._queue: deque[Any] = deque()
        self._deltas = function(self._chunks())

    def _chunks(self) -> Iterator[Chunk]:
        while self._queue:
            item = self._queue.popleft()
            if item is self._END:
                return
            yield item
        raise RuntimeError("the generator asked for a chunk before yielding the last delta")

    def feed(self, chunk: Chunk) -> Delta:
        self._queue.append(chunk)
        return next(self._deltas)

    def finish(self) -> Delta:
        self._queue.append(self._END)
        return next(self._deltas)


def from_generator(function: Callable[[Iterator[Chunk]], Iterator[Delta]]) -> Factory:
    """Adapt a generator function that takes an iterator of chunks and yields one delta per
    chunk, then one final delta after the chunks run out."""

    def factory() -> StreamNormalizer:
        return _Generator(function)

    factory.conformance = getattr(function, "conformance", None)  # type: ignore[attr-defined]
    factory.__qualname__ = getattr(function, "__qualname__", "generator")
    return factory


__all__ = [
    "Chunk",
    "Delta",
    "Factory",
    "HttpCall",
    "StreamNormalizer",
    "from_function",
    "from_generator",
    "implementation",
    "metadata",
]
