"""A recorded response -> chunks: detect the wire family and framing, run its decoder."""

from __future__ import annotations

import functools
from pathlib import Path
from types import ModuleType

from conformance.model.chunks import Chunk

from . import _anthropic, _gemini, _ollama, _openai_chat, _openai_responses
from ._common import json_array_items, json_objects, load_json
from ._load import load_cassette
from ._model import FAMILIES, CassetteError, Decoded, DecodeProblem, Interaction
from ._sse import parse_sse

DECODERS: dict[str, ModuleType] = {
    module.FAMILY: module
    for module in (_openai_chat, _anthropic, _openai_responses, _gemini, _ollama)
}
assert tuple(DECODERS) == FAMILIES


def detect_family(interaction: Interaction) -> str:
    """The family from the request URL; failing that, from the response's content type."""
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
    if interaction.content_type == "application/x-ndjson":
        return "ollama"
    raise interaction.fail(
        f"cannot tell the wire family of {interaction.method} {interaction.uri} "
        f"(content type {interaction.content_type or 'none'}); name it with `--family` or "
        f"`family:` in the case ({', '.join(FAMILIES)})"
    )


def detect_form(interaction: Interaction, family: str, text: str) -> str:
    """How the body is framed: from the content type, else from how the body starts."""
    content_type = interaction.content_type
    start = text.lstrip()[:6]
    if content_type == "text/event-stream":
        form = "sse"
    elif content_type in ("application/x-ndjson", "application/jsonl"):
        form = "ndjson"
    elif start.startswith("["):
        form = "json-array"
    elif start.startswith(("data:", "event:", ":", "id:")):
        form = "sse"
    elif family == "ollama" and text.strip().count("\n") > 0:
        form = "ndjson"
    else:
        form = "json"
    if form not in DECODERS[family].FORMS:
        raise interaction.fail(
            f"the body is {form} (content type {content_type or 'none'}), but {family} "
            f"responses are {', '.join(DECODERS[family].FORMS)}: is the family right?"
        )
    return form


def decode_interaction(interaction: Interaction, family: str | None = None) -> Decoded:
    if family is not None and family not in DECODERS:
        raise interaction.fail(f"unknown family {family!r}; the families are {', '.join(FAMILIES)}")
    if not 200 <= interaction.status < 300:
        excerpt = interaction.body[:200].decode("utf-8", "replace")
        raise interaction.fail(
            f"the recorded response is HTTP {interaction.status} {interaction.reason}, not a "
            f"model response: {excerpt!r}"
        )
    try:
        text = interaction.body.decode("utf-8")
    except UnicodeDecodeError as error:
        line = interaction.body.count(b"\n", 0, error.start) + 1
        raise interaction.fail(
            f"the body is not UTF-8 (byte {error.start}: {error.reason})", line
        ) from None
    family = family or detect_family(interaction)
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
        raise interaction.fail(f"{family} {form}: {problem.message}", problem.line) from None
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
