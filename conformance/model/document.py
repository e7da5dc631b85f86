"""A realistic streamed answer, for speed measurements: the one input every benchmark and the
growth check (engine/growth.py) use.

Mostly prose and code that is *not* a delimiter but looks like one (`Vec<T>`, `a < b`, HTML,
`<thinker>`), with about one reasoning block per 4 KB: what a normalizer sees most of the time.
Deterministic for a given size and seed, so figures from different runs and different
implementations are measured on the same text.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

PARAGRAPHS = (
    "The answer depends on how the stream is split; a normalizer must not care. ",
    "In Rust, Vec<T> and HashMap<K, V> are generic; in C++ std::vector<int> is too. ",
    "If a < b and b > c then nothing follows about a and c. ",
    '<div class="note"><p>HTML is not a delimiter.</p></div> ',
    "The <thinker> and the <think-tank> are not tags of ours, nor is &lt;think&gt;. ",
    "```python\nif x<3 and y>2:\n    print(x << 2)\n```\n",
    "Unicode: caf\u00e9, \u05e9\u05dc\u05d5\u05dd, \U0001f600, e\u0301. ",
)
BLOCKS = (
    "<think>Let me work through this step by step. First, the premise.</think>",
    "<thinking>Consider the alternatives: A < B, so B wins.</thinking>",
)
#: Share of pieces that are a reasoning block: about one block per 4 KB of text.
BLOCK_SHARE = 0.02


def realistic_document(size: int, seed: int = 7) -> str:
    """`size` characters (code points) of tag-sparse mixed text."""
    return mixed_document(size, PARAGRAPHS, seed)


def mixed_document(size: int, pieces: Sequence[str], seed: int) -> str:
    """`size` characters of `pieces` in random order, with a reasoning block (BLOCKS) as
    often as BLOCK_SHARE says."""
    rng = random.Random(seed)
    parts: list[str] = []
    total = 0
    while total < size:
        piece = rng.choice(BLOCKS) if rng.random() < BLOCK_SHARE else rng.choice(pieces)
        parts.append(piece)
        total += len(piece)
    return "".join(parts)[:size]


def cut(text: str, size: int) -> list[str]:
    """`text` in pieces of `size` characters (the last may be shorter)."""
    return [text[start : start + size] for start in range(0, len(text), size)]
