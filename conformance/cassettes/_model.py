"""Plain data of the cassette layer: recorded interactions, decoded responses, and errors."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from conformance.errors import UsageError
from conformance.model.chunks import Chunk

#: The wire families, one decoder module each (docs/cassettes.md).
FAMILIES = (
    "openai-chat",
    "anthropic",
    "openai-responses",
    "gemini",
    "ollama",
    "cohere",
    "bedrock",
)
#: How a response body is framed (`eventstream`: AWS's binary event-stream framing).
FORMS = ("sse", "json", "json-array", "ndjson", "eventstream")


class CassetteError(UsageError):
    """A cassette that cannot be loaded or decoded: names the cassette, the interaction and
    the line of the response body where the problem is. Exit status 2, as for a case file
    (a case whose cassette fails is a case-file error)."""

    def __init__(
        self,
        cassette: Path | str,
        message: str,
        *,
        interaction: int | None = None,
        line: int | None = None,
        offset: int | None = None,
    ) -> None:
        self.cassette = Path(cassette)
        self.message = message
        self.interaction = interaction
        self.line = line
        #: The byte offset in the response body where the problem is.
        self.offset = offset
        where = [str(self.cassette)]
        if interaction is not None:
            where.append(f"interaction {interaction}")
        if line is not None and offset is not None:
            where.append(f"response body line {line} (byte {offset})")
        elif line is not None:
            where.append(f"response body line {line}")
        elif offset is not None:
            where.append(f"response body byte {offset}")
        super().__init__(f"{': '.join(where)}: {message}")


class DecodeProblem(UsageError):
    """Raised by a decoder at a body line; the caller adds the cassette and interaction and
    raises the CassetteError it makes (exit status 2)."""

    def __init__(self, message: str, line: int | None = None, offset: int | None = None) -> None:
        self.message = message
        self.line = line
        #: The byte offset, where the decoder knows it better than the line's start.
        self.offset = offset
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

    @property
    def host(self) -> str:
        return (urlsplit(self.uri).hostname or "").lower()

    @property
    def request_json(self) -> Any:
        """The request body as JSON, or None when there is none or it is not JSON."""
        if not self.request_body:
            return None
        try:
            return json.loads(self.request_body)
        except (ValueError, UnicodeDecodeError):
            return None

    @property
    def requested_stream(self) -> bool | None:
        """The request body's `stream` flag, if it has one."""
        value = self.request_json
        if isinstance(value, Mapping) and isinstance(value.get("stream"), bool):
            return value["stream"]
        return None

    def fail(
        self, message: str, line: int | None = None, offset: int | None = None
    ) -> CassetteError:
        if line is not None and offset is None:
            offset = self.line_offset(line)
        return CassetteError(
            self.cassette, message, interaction=self.index, line=line, offset=offset
        )

    def line_offset(self, line: int) -> int:
        """The byte offset where body line `line` (1-based) starts."""
        offset = 0
        for _ in range(line - 1):
            found = self.body.find(b"\n", offset)
            if found < 0:
                return len(self.body)
            offset = found + 1
        return offset


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
