"""Bounded text: a long text keeps its start and end, and the exact length and SHA-256 of
the whole.

Whatever an implementation sends (a reply, an error or `unsupported` message, its name and
version) may be hundreds of megabytes; kept whole, a run's memory and its reports grow with
it. The start and the end are what a reader needs, the digest what tells two long texts
apart exactly.
"""

from __future__ import annotations

import hashlib
from typing import Any

#: Characters of a text hashed at a time: the digest never needs a second whole copy of it.
_SLICE = 1 << 20
#: How much longer than what is kept a text may be before it is clipped: clipping must save
#: more than the marker it adds.
_SLACK = 200


def digest(text: str) -> dict[str, Any]:
    """The length and SHA-256 (of the UTF-8 encoding) of `text`."""
    sha = hashlib.sha256()
    for start in range(0, len(text), _SLICE):
        sha.update(text[start : start + _SLICE].encode("utf-8", "surrogatepass"))
    return {"length": len(text), "sha256": sha.hexdigest()}


def clip(text: str, keep: int) -> str:
    """`text` itself, or its first and last `keep` characters with how much was left out."""
    if len(text) <= 2 * keep + _SLACK:
        return text
    left = len(text) - 2 * keep
    return f"{text[:keep]}[… {left} of {len(text)} characters left out …]{text[-keep:]}"


def clip_with_digest(text: str, keep: int) -> str:
    """`text` itself, or its first and last `keep` characters with the length and SHA-256
    of the whole in between: for a text that has no other place to keep its digest."""
    if len(text) <= 2 * keep + _SLACK:
        return text
    whole = digest(text)
    left = len(text) - 2 * keep
    return (
        f"{text[:keep]}[… {left} of {whole['length']} characters left out; sha256 of the "
        f"whole: {whole['sha256']} …]{text[-keep:]}"
    )
