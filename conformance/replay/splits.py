"""How `conformance serve` cuts a recorded response body into HTTP chunks (the `split`).

- `frames`: one chunk per SSE event, or per line of NDJSON and JSON (the default);
- `adversarial`: frames, and also cuts inside every delimiter (`<think>`, `</think>`... as
  text or as JSON escapes such as `\\u003cthink\\u003e`), inside every multi-byte UTF-8
  character and between CR and LF, so a client's own SSE and UTF-8 handling is fuzzed along
  with its normalizer;
- `bytes`: one byte per chunk;
- `none`: the whole body at once.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterable, Sequence

from conformance.model.grammar import PRESETS

SPLITS = ("frames", "adversarial", "bytes", "none")
_LINE = re.compile(rb"[^\r\n]*(?:\r\n|\r|\n)")
_CONTINUATION = re.compile(rb"[\x80-\xbf]")


def _delimiter_patterns() -> tuple[bytes, ...]:
    """Every delimiter of every named grammar, as text and as it looks JSON-escaped."""
    found: set[bytes] = set()
    for pairs in PRESETS.values():
        for delimiter in (d for pair in pairs for d in pair):
            found.add(delimiter.encode())
            found.add(json.dumps(delimiter)[1:-1].encode())  # non-ASCII as \uXXXX
            go_style = delimiter.replace("<", "\\u003c").replace(">", "\\u003e")
            found.add(go_style.encode())
    return tuple(sorted(found, key=len, reverse=True))


_DELIMITERS = _delimiter_patterns()


def frame_ends(body: bytes, form: str) -> list[int]:
    """Offsets just after each SSE event (its blank line), or after each line otherwise."""
    ends = []
    for match in _LINE.finditer(body):
        line = match.group()
        if form != "sse" or not line.strip(b"\r\n"):
            ends.append(match.end())
    return ends


def adversarial_cuts(body: bytes) -> list[int]:
    """Offsets inside delimiters, inside multi-byte UTF-8 characters and inside CRLF."""
    cuts: set[int] = set()
    for pattern in _DELIMITERS:
        start = body.find(pattern)
        while start != -1:
            cuts.update(range(start + 1, start + len(pattern)))
            start = body.find(pattern, start + 1)
    # Before each continuation byte, that is inside a multi-byte character.
    cuts.update(match.start() for match in _CONTINUATION.finditer(body))
    start = body.find(b"\r\n")
    while start != -1:
        cuts.add(start + 1)
        start = body.find(b"\r\n", start + 1)
    return sorted(cuts)


def cut_points(body: bytes, form: str, split: str) -> list[int]:
    """Where the body is cut into HTTP chunks, in order, excluding 0 and len(body)."""
    if split == "none":
        points: Iterable[int] = ()
    elif split == "bytes":
        points = range(1, len(body))
    elif split == "frames":
        points = frame_ends(body, form)
    elif split == "adversarial":
        points = set(frame_ends(body, form)) | set(adversarial_cuts(body))
    else:
        raise ValueError(f"unknown split {split!r}; the splits are {', '.join(SPLITS)}")
    return sorted(p for p in set(points) if 0 < p < len(body))


def pieces(body: bytes, points: Sequence[int]) -> list[bytes]:
    edges = [0, *points, len(body)]
    return [body[a:b] for a, b in itertools.pairwise(edges) if b > a]
