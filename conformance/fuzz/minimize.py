"""A last shrinking pass over a counterexample's chunks, after Hypothesis'.

Hypothesis shrinks the choices that generated an input, so a counterexample keeps the shape
of the strategy that drew it: a nested block drawn as one piece stays one, though the bug
needs only its last close delimiter. This pass works on the chunks themselves: it drops
chunks, native reasoning, and runs of characters (halves first, then smaller runs), and
merges neighbouring chunks, keeping each change under which the property still fails with
the same bug signature. Deterministic, and bounded in the calls it makes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

Chunks = list[dict[str, Any]]

#: At most this many candidate inputs are tried per counterexample.
ATTEMPTS = 400


def _size(chunks: Chunks) -> tuple[int, int]:
    return (
        sum(len(c.get("content") or "") + len(c.get("reasoning") or "") for c in chunks),
        len(chunks),
    )


def _candidates(chunks: Chunks) -> Iterator[Chunks]:
    """Smaller variants of `chunks`, the boldest first."""
    for index in range(len(chunks)):
        if len(chunks) > 1:
            yield chunks[:index] + chunks[index + 1 :]
    for index, chunk in enumerate(chunks):
        if chunk.get("reasoning"):
            yield [*chunks[:index], {**chunk, "reasoning": None}, *chunks[index + 1 :]]
    for field in ("content", "reasoning"):
        for index, chunk in enumerate(chunks):
            text = chunk.get(field) or ""
            run = len(text)
            while run >= 1:
                for start in range(0, len(text) - run + 1):
                    shorter = text[:start] + text[start + run :]
                    yield [*chunks[:index], {**chunk, field: shorter}, *chunks[index + 1 :]]
                run //= 2
    for index in range(len(chunks) - 1):
        first, second = chunks[index], chunks[index + 1]
        if first.get("reasoning") or second.get("reasoning"):
            continue
        merged = {"content": (first.get("content") or "") + (second.get("content") or "")}
        yield [*chunks[:index], {**merged, "reasoning": None}, *chunks[index + 2 :]]


def minimize(
    chunks: Chunks, still_fails: Callable[[Chunks], bool], attempts: int = ATTEMPTS
) -> Chunks:
    """The smallest variant of `chunks` found on which `still_fails` holds (greedily:
    each accepted change restarts the search from the smaller input)."""
    best = [dict(chunk) for chunk in chunks]
    tried: set[str] = set()
    improved = True
    while improved and attempts > 0:
        improved = False
        for candidate in _candidates(best):
            if _size(candidate) >= _size(best):
                continue
            key = repr(candidate)
            if key in tried:
                continue
            tried.add(key)
            attempts -= 1
            if still_fails(candidate):
                best, improved = candidate, True
                break
            if attempts <= 0:
                break
    return best
