"""Plain data of the cassette layer: recorded interactions, decoded responses, and errors."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from conformance.model.chunks import Chunk

#: The wire families, one decoder module each (docs/cassettes.md).
FAMILIES = ("openai-chat", "anthropic", "openai-responses", "gemini", "ollama")
#: How a response body is framed.
FORMS = ("sse", "json", "json-array", "ndjson")


class CassetteError(Exception):
    """A cassette that cannot be loaded or decoded: names the cassette, the interaction and
    the line of the response body where the problem is."""

    def __init__(
        self,
        cassette: Path | str,
        message: str,
        *,
        interaction: int | None = None,
        line: int | None = None,
    ) -> None:
        self.cassette = Path(cassette)
        self.message = message
        self.interaction = interaction
        self.line = line
        where = [str(self.cassette)]
        if interaction is not None:
            where.append(f"interaction {interaction}")
        if line is not None:
            where.append(f"response body line {line}")
        super().__init__(f"{': '.join(where)}: {message}")


class DecodeProblem(Exception):
    """Raised by a decoder at a body line; the caller adds the cassette and interaction."""

    def __init__(self, message: str, line: int | None = None) -> None:
        self.message = message
        self.line = line
        super().__init__(message)


@dataclass(frozen=True, slots=True)
class Interaction:
    """One recorded request and its response, as vcrpy stores them."""

    cassette: Path
    index: int
    method: str
    uri: str
    #: Header names lowercased; several values of one header are joined with ", ".
    request_headers: Mapping[str, str]
    request_body: bytes | None
    status: int
    reason: str
    response_headers: Mapping[str, tuple[str, ...]]
    body: bytes

    @property
    def path(self) -> str:
        return urlsplit(self.uri).path

    @property
    def content_type(self) -> str:
        values = self.response_headers.get("content-type", ())
        return values[0].split(";")[0].strip().lower() if values else ""

    def fail(self, message: str, line: int | None = None) -> CassetteError:
        return CassetteError(self.cassette, message, interaction=self.index, line=line)


@dataclass(frozen=True, slots=True)
class Decoded:
    """A response turned into chunks, with how it was read."""

    family: str
    form: str
    chunks: tuple[Chunk, ...]
    interaction: Interaction

    @property
    def streaming(self) -> bool:
        return self.form != "json"
