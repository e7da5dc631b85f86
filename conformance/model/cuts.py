"""Where a chunking cuts inside a delimiter (SPEC.md 5.11): what atomic delimiters rule out,
and what tells the failures that only such a cut causes."""

from __future__ import annotations

import itertools
from collections.abc import Iterable

from conformance.model.grammar import Grammar


def inside_delimiters(text: str, grammar: Grammar) -> set[int]:
    """The points of `text` strictly inside one of its delimiter occurrences."""
    return {point for start, end, _ in grammar.occurrences(text) for point in range(start + 1, end)}


def cuts_delimiter(contents: Iterable[str | None], grammar: Grammar) -> bool:
    """Whether chunks with these contents (in order; native reasoning between them or not,
    as the normalizer scans the content as one text) cut inside a delimiter."""
    texts = [content or "" for content in contents]
    inside = inside_delimiters("".join(texts), grammar)
    return any(bound in inside for bound in itertools.accumulate(map(len, texts)))
