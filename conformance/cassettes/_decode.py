"""A recorded response -> chunks: detect the wire family and framing, run its decoder."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from types import ModuleType

from conformance.model.chunks import Chunk

from . import (
    _anthropic,
    _bedrock,
    _cohere,
    _gemini,
    _ollama,
    _openai_chat,
    _openai_responses,
)
from ._common import json_array_items, json_objects, load_json
from ._load import load_cassette
from ._model import FAMILIES, CassetteError, Decoded, DecodeProblem, Interaction
from ._sse import parse_sse

DECODERS: dict[str, ModuleType] = {
    module.FAMILY: module
    for module in (_openai_chat, _anthropic, _openai_responses, _gemini, _ollama, _cohere, _bedrock)
}
assert tuple(DECODERS) == FAMILIES


def guess_family(interaction: Interaction) -> str | None:
    """The family from the request URL, else from the content type, else from the shape of
    the response body; None when nothing says it is a model call."""
    path = interaction.path
    if ":generateContent" in path or ":streamGenerateContent" in path:
        return "gemini"
    if path.endswith("/chat/completions"):
        return "openai-chat"
    if path.endswith("/responses"):
        return "openai-responses"
    if path.endswith("/messages"):
        return "anthropic"
    if path.endswith(("/api/chat", "/api/generate")):
        return "ollama"
    if path.endswith(("/converse", "/converse-stream")) and "/model/" in path:
        return "bedrock"
    if path.endswith("/v2/chat"):
        return "cohere"
    if interaction.content_type == "application/x-ndjson":
        return "ollama"
    if interaction.content_type == "application/vnd.amazon.eventstream":
        return "bedrock"
    return sniff_family(interaction.body[:4096])


#: Marks of each family at the start of a response body (proxies and HAR files record
#: model calls at URLs of their own).
_SHAPES = (
    ("openai-responses", (b'"object":"response"', b'"object": "response"', b"response.created")),
    ("openai-chat", (b'"chat.completion', b'"choices"')),
    ("anthropic", (b"message_start", b'"type":"message"', b'"type": "message"')),
    ("gemini", (b'"candidates"',)),
    ("cohere", (b"message-start", b'"finish_reason":"COMPLETE"', b'"finish_reason": "COMPLETE"')),
    ("ollama", (b'"done":', b'"done" :')),
    ("bedrock", (b'"stopReason"',)),
)


def sniff_family(head: bytes) -> str | None:
    for family, marks in _SHAPES:
        if any(mark in head for mark in marks):
            return family
    return None


def detect_family(interaction: Interaction) -> str:
    family = guess_family(interaction)
    if family is None:
        raise interaction.fail(
            f"cannot tell the wire family of {interaction.method} {interaction.uri} "
            f"(content type {interaction.content_type or 'none'}, and the body looks like none "
            f"of them); name it with `--family` or `family:` in the case ({', '.join(FAMILIES)})"
        )
    return family


_JSON_TYPES = ("application/json", "text/json", "application/problem+json")
_NDJSON_TYPES = ("application/x-ndjson", "application/jsonl", "application/ndjson")
_SSE_START = ("data:", "event:", ":", "id:", "retry:")


def detect_form(interaction: Interaction, family: str, text: str) -> str:
    """How the body is framed: by the declared content type and the request's `stream`
    flag, whatever the body's layout (a pretty-printed JSON document has many lines and is
    still one document); by how the body starts only when neither says."""
    content_type = interaction.content_type
    stream = interaction.requested_stream
    forms = DECODERS[family].FORMS
    start = text.lstrip()[:6]
    if content_type == "text/event-stream":
        form = "sse"
    elif content_type in _NDJSON_TYPES:
        form = "ndjson"
    elif content_type == "application/vnd.amazon.eventstream":
        form = "eventstream"
    elif content_type in _JSON_TYPES or content_type.endswith("+json"):
        if start.startswith("[") and "json-array" in forms:
            form = "json-array"
        elif start.startswith(_SSE_START) and stream is not False and "sse" in forms:
            form = "sse"  # labelled JSON by a server or a recorder, framed as SSE
        else:
            form = "json"
    elif start.startswith("[") and "json-array" in forms:
        form = "json-array"
    elif start.startswith(_SSE_START):
        form = "sse"
    elif "ndjson" in forms and stream is not False and not _one_document(text):
        form = "ndjson"
    else:
        form = "json"
    if form not in forms:
        raise interaction.fail(
            f"the body is {form} (content type {content_type or 'none'}), but {family} "
            f"responses are {', '.join(forms)}: is the family right?"
        )
    return form


def _one_document(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def decode_interaction(interaction: Interaction, family: str | None = None) -> Decoded:
    if family is not None and family not in DECODERS:
        raise interaction.fail(f"unknown family {family!r}; the families are {', '.join(FAMILIES)}")
    if not 200 <= interaction.status < 300:
        excerpt = interaction.body[:200].decode("utf-8", "replace")
        raise interaction.fail(
            f"the recorded response is HTTP {interaction.status} {interaction.reason}, not a "
            f"model response: {excerpt!r}"
        )
    family = family or detect_family(interaction)
    if interaction.content_type == "application/vnd.amazon.eventstream" or (
        family == "bedrock" and interaction.path.endswith("/converse-stream")
    ):
        if family != "bedrock":
            raise interaction.fail(
                f"the body is an AWS event stream, but {family} responses are "
                f"{', '.join(DECODERS[family].FORMS)}: is the family right?"
            )
        try:
            chunks = _bedrock.decode_eventstream(interaction.body)
        except DecodeProblem as problem:
            raise interaction.fail(
                f"{family} eventstream: {problem.message}", offset=problem.offset
            ) from None
        return Decoded(family, "eventstream", tuple(chunks), interaction)
    try:
        text = interaction.body.decode("utf-8")
    except UnicodeDecodeError as error:
        line = interaction.body.count(b"\n", 0, error.start) + 1
        raise interaction.fail(
            f"the body is not UTF-8 (byte {error.start}: {error.reason})", line, error.start
        ) from None
    form = detect_form(interaction, family, text)
    decoder = DECODERS[family]
    try:
        if form == "sse":
            chunks = decoder.decode_sse(parse_sse(text))
        elif form == "json":
            chunks = decoder.decode_json(load_json(text, 1, "the response body"), 1)
        elif form == "json-array":
            chunks = decoder.decode_objects(json_array_items(text))
        else:
            chunks = decoder.decode_objects(json_objects(text, "a line"))
    except DecodeProblem as problem:
        raise interaction.fail(
            f"{family} {form}: {problem.message}", problem.line, problem.offset
        ) from None
    return Decoded(family, form, tuple(chunks), interaction)


def decode_cassette(path: Path, interaction: int = 0, family: str | None = None) -> Decoded:
    """Load a cassette with vcrpy and decode one of its interactions."""
    return decode_interaction(load_cassette(path).interaction(interaction), family)


def chunks_for_case(
    path: Path, interaction: int = 0, family: str | None = None
) -> tuple[Chunk, ...]:
    """The chunks a cassette-backed case feeds: cached while the file is unchanged, since
    every run and check loads the corpus again."""
    try:
        stat = path.stat()
    except OSError:
        raise CassetteError(path, "the cassette does not exist") from None
    return _cached(path.resolve(), stat.st_mtime_ns, stat.st_size, interaction, family)


@functools.lru_cache(maxsize=512)
def _cached(
    path: Path, mtime: int, size: int, interaction: int, family: str | None
) -> tuple[Chunk, ...]:
    del mtime, size  # part of the cache key only
    return decode_cassette(path, interaction, family).chunks
