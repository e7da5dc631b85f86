"""Throughput of the reference normalizer. Prints figures; asserts nothing.

    python benchmarks/bench_reference.py [--quick]

- MB/s on a 10 MB realistic mixed document (prose, code, blocks, near-misses; the document
  `conformance bench` uses, from conformance/_document.py) fed in 1-char,
  4-char (token-like) and 4 KB chunks; chunks per second for the token-sized chunks;
- time for 1, 10 and 100 MB (4 KB chunks): the ratios show whether growth is linear;
- pathological inputs (1 MB of `<`, of `<thi` repeated, of unclosed opens) in one chunk and
  in 1-char chunks.
"""

from __future__ import annotations

import argparse
import platform
import time

from conformance.reference import Normalizer
from conformance.tools.document import cut
from conformance.tools.document import realistic_document as document


def chunks(text: str, size: int) -> list[dict[str, str]]:
    return [{"content": piece} for piece in cut(text, size)]


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
