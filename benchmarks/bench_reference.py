"""Throughput of the reference normalizer, side by side with a naive stand-in and the public
peers installed. Prints figures; asserts nothing.

    python benchmarks/bench_reference.py [--quick] [--repeats N] [--budget SECONDS]

- MB/s (UTF-8) on two 1 MB documents fed in 1-character, 4-character (token-like) and 4 KB
  chunks: the realistic, tag-sparse document `conformance bench` uses
  (conformance/model/document.py: prose and code, `Vec<T>`, HTML, `<thinker>`, about one
  reasoning block per 4 KB) and a `<`-dense one (HTML and code, a `<` every few
  characters, the same share of reasoning blocks);
- the same for the reference under `think_only`, the stand-in's own two delimiters (the
  default grammar has four: `<thinking>` too), like for like;
- the same for a stand-in that only passes text through around `str.find("<think>")` and
  `str.find("</think>")` (no held-back suffix, no other tags: wrong on split delimiters,
  but as fast as Python gets), and for the peer adapters whose library is installed
  (conformance/adapters: SGLang's `qwen3` and `deepseek-r1` parsers, pydantic-ai), driven
  in process as `conformance bench` drives them; then the reference's speed as a ratio of
  each;
- linear growth: the reference's time on 1, 10 and 100 MB of pathological inputs (`<`
  repeated, `<thi` repeated, `<think` repeated (a near miss of every delimiter at every
  sixth character), unclosed `<think>` repeated, native reasoning in every chunk) in 4 KB
  chunks, and on 1 and 10 MB in 4-character chunks, with the largest held-back suffix seen.

The reference scans exact grammars in C when its install built the C scan (the first line
says which); `CONFORMANCE_PURE_PYTHON=1` measures the regular expressions that stand in for
it where no C compiler was present.

Each figure is the best of `--repeats` runs (default 3): other processes on the machine only
ever slow a run down. An implementation too slow to take the whole document `--repeats` times
within `--budget` seconds is measured on a prefix of it, said next to its figure.
"""

from __future__ import annotations

import argparse
import itertools
import platform
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from conformance.model.c_scan import C_SCAN
from conformance.model.document import cut, mixed_document, realistic_document
from conformance.reference import Normalizer

Chunk = dict[str, Any]
Factory = Callable[[], Any]

CHUNK_SIZES = (1, 4, 4096)
#: Width of the first column of the tables.
WIDTH = 46
#: HTML and code: a `<` every few characters, none of them a delimiter. Near-misses such as
#: `<thinker>` are the realistic document's business: this one measures `<` density.
DENSE_PIECES = (
    '<div class="row"><span>a</span><b>bold</b></div>\n',
    "<ul><li><a href='#x'>x</a></li><li>y</li></ul>\n",
    "if (a<b && b<c) { v.push_back(std::vector<int>{1, 2}); }\n",
    "let m: HashMap<String, Vec<Option<T>>> = HashMap::new(); x << 2; a <= b;\n",
    "<p>1 < 2 and 3 <<= 4</p><br/><img src=x><td><tr>\n",
)


#: The reference under the stand-in's own delimiters (`<think>`, `</think>`; the default
#: grammar has `<thinking>` too): like for like with the stand-in and the SGLang parsers.
THINK_ONLY = "reference, think_only"


class FindThink:
    """The stand-in: `<think>`/`</think>` found with `str.find` inside each chunk, the rest
    passed through at once. Holds nothing back, so a delimiter split across chunks leaks."""

    def __init__(self) -> None:
        self.inside = False

    def feed(self, chunk: Mapping[str, Any]) -> dict[str, str]:
        text = chunk.get("content") or ""
        thinking = chunk.get("reasoning") or ""
        if not self.inside and text.find("<think>") < 0:
            return {"assistant": text, "thinking": thinking}
        assistant: list[str] = []
        thought = [thinking]
        while text:
            if self.inside:
                at = text.find("</think>")
                if at < 0:
                    thought.append(text)
                    break
                thought.append(text[:at])
                text = text[at + 8 :]
                self.inside = False
            else:
                at = text.find("<think>")
                if at < 0:
                    assistant.append(text)
                    break
                assistant.append(text[:at])
                text = text[at + 7 :]
                self.inside = True
        return {"assistant": "".join(assistant), "thinking": "".join(thought)}

    def finish(self) -> dict[str, str]:
        self.inside = False
        return {"assistant": "", "thinking": ""}


def implementations() -> list[tuple[str, Factory]]:
    """The reference, the stand-in, and every peer adapter whose library imports."""
    found: list[tuple[str, Factory]] = [
        ("reference", Normalizer),
        (THINK_ONLY, lambda: Normalizer({"delimiters": "think_only"})),
        ("find-<think> stand-in", FindThink),
    ]
    try:
        from conformance.adapters.sglang import DeepSeekR1, Qwen3

        found += [("sglang (qwen3)", Qwen3), ("sglang (deepseek-r1)", DeepSeekR1)]
    except ImportError as error:
        print(f"(sglang not measured: {error})")
    try:
        from conformance.adapters.pydantic_ai import PydanticAI

        found.append(("pydantic-ai", PydanticAI))
    except ImportError as error:
        print(f"(pydantic-ai not measured: {error})")
    return found


def dense_document(size: int, seed: int = 11) -> str:
    """`size` characters of `<`-dense HTML and code, with reasoning blocks as often as in
    the realistic document."""
    return mixed_document(size, DENSE_PIECES, seed)


def chunks(text: str, size: int, reasoning: str | None = None) -> list[Chunk]:
    return [{"content": piece, "reasoning": reasoning} for piece in cut(text, size)]


def lazy_chunks(text: str, size: int) -> Iterator[Chunk]:
    for start in range(0, len(text), size):
        yield {"content": text[start : start + size]}


def run(factory: Factory, pieces: Iterable[Chunk]) -> float:
    normalizer = factory()
    feed = normalizer.feed
    start = time.perf_counter()
    for chunk in pieces:
        feed(chunk)
    normalizer.finish()
    return time.perf_counter() - start


def throughput(
    factory: Factory, text: str, size: int, repeats: int, budget: float
) -> tuple[float, int]:
    """Best MB/s over `repeats` runs, and the characters measured: the whole text, or a
    prefix when the whole would not fit `repeats` times in `budget` seconds."""
    sample = text[: min(len(text), 20_000)]
    sampled = chunks(sample, size)
    estimate = min(run(factory, sampled) for _ in range(2)) * len(text) / len(sample)
    if estimate * repeats > budget:
        share = budget / (estimate * repeats)
        text = text[: max(len(sample), int(len(text) * share) // size * size)]
    pieces = chunks(text, size)
    best = min(run(factory, pieces) for _ in range(repeats))
    return len(text.encode("utf-8")) / 1e6 / best, len(text)


def side_by_side(
    name: str, text: str, impls: list[tuple[str, Factory]], repeats: int, budget: float
) -> None:
    print(f"\n{name}, {len(text) / 1e6:g} M characters ({len(text.encode()) / 1e6:.2f} MB):")
    header = "".join(f"{_label(size):>16}" for size in CHUNK_SIZES)
    print(f"  {'MB/s':<{WIDTH}}{header}")
    figures: dict[str, list[float]] = {}
    for label, factory in impls:
        cells = []
        figures[label] = []
        for size in CHUNK_SIZES:
            rate, measured = throughput(factory, text, size, repeats, budget)
            figures[label].append(rate)
            note = "" if measured == len(text) else f" ({measured // 1000}K)"
            cells.append(f"{rate:10.2f}{note:>6}")
        print(f"  {label:<{WIDTH}}" + "".join(f"{cell:>16}" for cell in cells))
    for mine in ("reference", THINK_ONLY):
        for label, rates in figures.items():
            if label.startswith("reference"):
                continue
            ratios = "".join(
                f"{ref / rate:15.2f}x" for ref, rate in zip(figures[mine], rates, strict=True)
            )
            print(f"  {mine + ' / ' + label:<{WIDTH}}{ratios}")


def _label(size: int) -> str:
    return "4 KB chunks" if size == 4096 else f"{size}-char chunks"


def linearity(scale: int) -> None:
    print(
        "\nlinear growth of the reference on pathological inputs: seconds, and nanoseconds"
        " per character\n(best of 3, of 1 at 100 MB; 1 MB still fits in the CPU caches, larger"
        " inputs do not)"
    )
    realistic = realistic_document(100_000_000 // scale)
    inputs: list[tuple[str, Callable[[int], str], str | None]] = [
        ("'<' repeated", lambda n: "<" * n, None),
        ("'<thi' repeated", lambda n: ("<thi" * (n // 4 + 1))[:n], None),
        ("'<think' repeated", lambda n: ("<think" * (n // 6 + 1))[:n], None),
        ("unclosed '<think>' repeated", lambda n: ("<think>" * (n // 7 + 1))[:n], None),
        ("native reasoning every chunk", lambda n: realistic[:n], "r"),
    ]
    for name, make, reasoning in inputs:
        print(f"  {name}:")
        for size, megabytes in ((4096, (1, 10, 100)), (4, (1, 10))):
            parts = []
            times = []
            for mb in megabytes:
                text = make(mb * 1_000_000 // scale)
                repeats = 1 if mb >= 100 else 3
                if size == 4096:
                    pieces: Any = chunks(text, size, reasoning)
                    seconds = min(run(Normalizer, pieces) for _ in range(repeats))
                    del pieces
                else:
                    seconds = min(
                        run(Normalizer, _with_reasoning(lazy_chunks(text, size), reasoning))
                        for _ in range(repeats)
                    )
                times.append(seconds)
                parts.append(
                    f"{mb / scale:g} MB {seconds:7.3f} s ({seconds / len(text) * 1e9:5.1f})"
                )
            growth = " then ".join(f"x{b / a:.1f}" for a, b in itertools.pairwise(times))
            held = largest_carry(make(1_000_000 // scale), size, reasoning)
            print(
                f"    {_label(size):<16} " + ", ".join(parts) + f"; growth {growth} per x10;"
                f" held back at most {held}"
            )


def _with_reasoning(pieces: Iterator[Chunk], reasoning: str | None) -> Iterator[Chunk]:
    if reasoning is None:
        return pieces
    return ({"content": chunk["content"], "reasoning": reasoning} for chunk in pieces)


def largest_carry(text: str, size: int, reasoning: str | None) -> int:
    """The longest held-back suffix over a stream: the normalizer's working memory."""
    normalizer = Normalizer()
    longest = 0
    for chunk in _with_reasoning(lazy_chunks(text, size), reasoning):
        normalizer.feed(chunk)
        longest = max(longest, len(normalizer._carry))
    normalizer.finish()
    return longest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="inputs ten times smaller")
    parser.add_argument("--repeats", type=int, default=3, help="runs per figure, best counts")
    parser.add_argument(
        "--budget", type=float, default=6.0, help="seconds per figure before a prefix is used"
    )
    args = parser.parse_args()
    scale = 10 if args.quick else 1
    print(
        f"reference normalizer on {platform.python_implementation()} "
        f"{platform.python_version()}, {platform.machine()}, {platform.processor() or '?'};"
        f" delimiter scan: {'C' if C_SCAN is not None else 'regular expressions'}"
    )
    size = 1_000_000 // scale
    impls = implementations()
    for name, text in (
        ("realistic document (tag-sparse)", realistic_document(size)),
        ("'<'-dense document (HTML and code)", dense_document(size)),
    ):
        side_by_side(name, text, impls, args.repeats, args.budget)
    linearity(scale)


if __name__ == "__main__":
    main()
