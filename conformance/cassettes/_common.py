"""What every decoder needs: JSON with body lines in errors, typed fields, and chunk runs."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from conformance.model.chunks import Chunk

from ._model import DecodeProblem

#: Where a piece of text goes: native reasoning or content.
REASONING, CONTENT = "reasoning", "content"


def load_json(text: str, line: int, what: str) -> Any:
    """Parse `text`, which starts at body line `line`; errors name the line of the fault."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        excerpt = text if len(text) <= 80 else text[:77] + "..."
        if error.lineno > 1:
            excerpt = text[max(0, error.pos - 40) : error.pos + 40]
        raise DecodeProblem(
            f"invalid JSON in {what}: {error.msg} at column {error.colno}: {excerpt!r}",
            line + error.lineno - 1,
        ) from None


def json_objects(text: str, what: str) -> Iterator[tuple[Any, int]]:
    """Each non-blank line of newline-delimited JSON, with its line number."""
    for number, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            yield load_json(line, number, what), number


def json_array_items(text: str) -> Iterator[tuple[Any, int]]:
    """The elements of a JSON array streamed as one document (Gemini without `alt=sse`),
    each with the body line it starts on."""
    decoder = json.JSONDecoder()
    position = _skip_blanks(text, 0)
    if text[position : position + 1] != "[":
        raise DecodeProblem("expected a JSON array (`[`) as the body", _line_at(text, position))
    position = _skip_blanks(text, position + 1)
    if text[position : position + 1] == "]":
        return
    while True:
        if position >= len(text):
            raise DecodeProblem(
                "truncated body: the JSON array is not closed with `]`", _line_at(text, position)
            )
        try:
            value, end = decoder.raw_decode(text, position)
        except json.JSONDecodeError as error:
            raise DecodeProblem(
                f"invalid JSON in an array element: {error.msg} at column {error.colno} "
                "(a truncated body ends like this too)",
                error.lineno,
            ) from None
        yield value, _line_at(text, position)
        position = _skip_blanks(text, end)
        separator = text[position : position + 1]
        if separator == "]":
            rest = _skip_blanks(text, position + 1)
            if rest < len(text):
                raise DecodeProblem("text after the end of the JSON array", _line_at(text, rest))
            return
        if separator != ",":
            if not separator:
                raise DecodeProblem(
                    "truncated body: the JSON array is not closed with `]`",
                    _line_at(text, position),
                )
            raise DecodeProblem(
                f"expected `,` or `]` between array elements, found {separator!r}",
                _line_at(text, position),
            )
        position = _skip_blanks(text, position + 1)


def _skip_blanks(text: str, position: int) -> int:
    while position < len(text) and text[position] in " \t\r\n":
        position += 1
    return position


def _line_at(text: str, position: int) -> int:
    return text.count("\n", 0, position) + 1


def mapping(value: Any, what: str, line: int) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise DecodeProblem(f"{what} must be a JSON object, not {_kind(value)}", line)
    return value


def text_of(value: Mapping[str, Any], key: str, what: str, line: int) -> str | None:
    """A text field: a string, null or absent (None); anything else is a problem."""
    text = value.get(key)
    if text is None or isinstance(text, str):
        return text
    raise DecodeProblem(f"{what}.{key} must be a string or null, not {_kind(text)}", line)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}.get(
        type(value), f"a {type(value).__name__}"
    )


def runs(pieces: Iterable[tuple[str, str]]) -> list[Chunk]:
    """Chunks from ordered (where, text) pieces of one message: reasoning and content of
    adjacent pieces share a chunk, and a reasoning piece after content starts a new one,
    because a chunk's reasoning is processed before its content (SPEC.md 3.2)."""
    chunks: list[Chunk] = []
    reasoning: list[str] = []
    content: list[str] = []
    for where, text in pieces:
        if where == REASONING and content:
            chunks.append(_chunk(reasoning, content))
            reasoning, content = [], []
        (reasoning if where == REASONING else content).append(text)
    if reasoning or content:
        chunks.append(_chunk(reasoning, content))
    return chunks


def _chunk(reasoning: list[str], content: list[str]) -> Chunk:
    return Chunk(
        content="".join(content) if content else None,
        reasoning="".join(reasoning) if reasoning else None,
    )


def provider_error(value: Mapping[str, Any], line: int) -> DecodeProblem:
    error = value.get("error")
    if isinstance(error, Mapping):
        kind = error.get("type") or error.get("code") or error.get("status") or "error"
        message = error.get("message") or json.dumps(error)[:200]
        return DecodeProblem(f"the provider sent an error ({kind}): {message}", line)
    return DecodeProblem(f"the provider sent an error: {json.dumps(error)[:200]}", line)
