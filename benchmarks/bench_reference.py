"""Throughput of the reference normalizer. Prints figures; asserts nothing.

    python benchmarks/bench_reference.py [--quick]

- MB/s on a 10 MB realistic mixed document (prose, code, blocks, near-misses) fed in 1-char,
  4-char (token-like) and 4 KB chunks; chunks per second for the token-sized chunks;
- time for 1, 10 and 100 MB (4 KB chunks): the ratios show whether growth is linear;
- pathological inputs (1 MB of `<`, of `<thi` repeated, of unclosed opens) in one chunk and
  in 1-char chunks.
"""

from __future__ import annotations

import argparse
import platform
import random
import time
from collections.abc import Iterator

from conformance.reference import Normalizer

PARAGRAPHS = [
    "The answer depends on how the stream is split; a normalizer must not care. ",
    "In Rust, Vec<T> and HashMap<K, V> are generic; in C++ std::vector<int> is too. ",
    "If a < b and b > c then nothing follows about a and c. ",
    '<div class="note"><p>HTML is not a delimiter.</p></div> ',
    "The <thinker> and the <think-tank> are not tags of ours, nor is &lt;think&gt;. ",
    "```python\nif x<3 and y>2:\n    print(x << 2)\n```\n",
    "Unicode: caf\u00e9, \u05e9\u05dc\u05d5\u05dd, \U0001f600, e\u0301. ",
]
BLOCKS = [
    "<think>Let me work through this step by step. First, the premise.</think>",
    "<thinking>Consider the alternatives: A < B, so B wins.</thinking>",
]


def document(size: int, seed: int = 7) -> str:
    """Tag-sparse realistic text: about one block per 4 KB."""
    rng = random.Random(seed)
    parts: list[str] = []
    total = 0
    while total < size:
        piece = rng.choice(BLOCKS) if rng.random() < 0.02 else rng.choice(PARAGRAPHS)
        parts.append(piece)
        total += len(piece)
    return "".join(parts)[:size]


def chunks(text: str, size: int) -> Iterator[dict[str, str]]:
    for start in range(0, len(text), size):
        yield {"content": text[start : start + size]}


def feed_all(text: str, size: int) -> float:
    pieces = list(chunks(text, size))
    normalizer = Normalizer()
    feed = normalizer.feed
    start = time.perf_counter()
    for chunk in pieces:
        feed(chunk)
    normalizer.finish()
    return time.perf_counter() - start


def report(label: str, text: str, size: int) -> float:
    seconds = feed_all(text, size)
    count = -(-len(text) // size)
    megabytes = len(text.encode("utf-8")) / 1e6
    print(
        f"  {label:<34} {megabytes / seconds:9.1f} MB/s  {count / seconds:12,.0f} chunks/s"
        f"  ({seconds:.3f} s)"
    )
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller inputs, for a smoke run")
    args = parser.parse_args()
    scale = 10 if args.quick else 1
    print(
        f"reference normalizer on {platform.python_implementation()} "
        f"{platform.python_version()}, {platform.machine()}"
    )

    text = document(10_000_000 // scale)
    print(f"\nrealistic mixed document, {len(text) / 1e6:.0f} M characters:")
    for label, size in (
        ("1-char chunks", 1),
        ("4-char chunks (token-like)", 4),
        ("4 KB chunks", 4096),
    ):
        report(label, text, size)

    print("\nlinear growth (4 KB chunks):")
    base = None
    for megabytes in (1, 10, 100):
        big = document(megabytes * 1_000_000 // scale)
        seconds = feed_all(big, 4096)
        base = base or seconds
        print(f"  {megabytes:>4} MB: {seconds:7.3f} s  ({seconds / base:6.1f} x the 1 MB time)")

    print("\npathological inputs, 1 M characters:")
    for name, unit in (
        ("'<' repeated", "<"),
        ("'<thi' repeated", "<thi"),
        ("unclosed '<think>' repeated", "<think>"),
    ):
        bad = (unit * (1_000_000 // scale // len(unit) + 1))[: 1_000_000 // scale]
        report(f"{name}, one chunk", bad, len(bad))
        report(f"{name}, 1-char chunks", bad, 1)


if __name__ == "__main__":
    main()
