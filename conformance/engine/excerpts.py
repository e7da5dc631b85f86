"""Bounded text in results: long texts keep their start and end, and an exact digest.

A reply of hundreds of megabytes must not make reports of hundreds of megabytes (or run the
harness out of memory writing them). What a reader needs is where the texts differ, which
`first_divergence` already names, plus the start and end; what a machine needs to tell two
long replies apart is their length and SHA-256, kept in the result's `digests`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from conformance.model.clipping import clip, digest
from conformance.model.results import CaseResult

#: Characters kept from the start and from the end of a long text.
KEEP = 4096
#: A reason is one line for a reader: it keeps less.
KEEP_REASON = 1024


def bounded(result: CaseResult) -> CaseResult:
    """The result with every long text clipped, and the digest of each clipped text."""
    digests: dict[str, Any] = {}

    def keep(name: str, text: str, size: int = KEEP) -> str:
        short = clip(text, size)
        if short is not text:
            digests[name] = digest(text)
        return short

    def channels(name: str, value: Mapping[str, str] | None) -> Mapping[str, str] | None:
        if value is None:
            return None
        return {key: keep(f"{name}.{key}", text) for key, text in value.items()}

    chunks = result.chunks
    if chunks is not None:
        chunks = [
            {
                key: (text if text is None else keep(f"chunks.{index}.{key}", text))
                for key, text in chunk.items()
            }
            for index, chunk in enumerate(chunks)
        ]
    clipped = replace(
        result,
        reason=keep("reason", result.reason, KEEP_REASON),
        expected=channels("expected", result.expected),
        actual=channels("actual", result.actual),
        chunks=chunks,
        stderr=None if result.stderr is None else keep("stderr", result.stderr),
    )
    if not digests:
        return result
    return replace(clipped, digests=digests)
