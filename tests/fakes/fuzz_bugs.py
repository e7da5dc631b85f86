"""Normalizers with bugs that users have reported, which `conformance fuzz` must report one
counterexample each for, whatever else is wrong with the same implementation.

Unlike `fuzz_targets.py`, the corpus catches these too: they test what fuzzing reports (every
distinct bug, each shrunk to a few characters), not what the corpus misses.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from conformance.interface import implementation
from conformance.reference import Normalizer


@implementation(name="drops-trailing-partial")
class DropsTrailingPartial(Normalizer):
    """The Vercel AI SDK's best-known bug: a partial delimiter held back at the end of the
    stream, outside a block, is dropped instead of released (`x<t` becomes `x`)."""

    def finish(self) -> Any:
        if not self._inside:
            self._carry = ""
        return super().finish()


@implementation(name="stray-close-and-split-lt")
class StrayCloseAndSplitLt(Normalizer):
    """Two independent bugs, both in the final channels (so one property sees both):

    - a close delimiter that arrives whole outside a block (a stray `</think>`, its open in
      the prompt) is shown in the answer instead of stripped;
    - a chunk that ends in a lone `<` outside a block, when the next chunk completes a
      delimiter with it, shows that `<` in the answer as well.
    """

    def feed(self, chunk: Mapping[str, Any]) -> Any:
        content = chunk.get("content") or ""
        leak = ""
        if self._carry == "<" and not self._inside and self._grammar.delimiter.match("<" + content):
            leak = "<"
        first = None if self._inside or self._carry else self._grammar.delimiter.search(content)
        stray = first if first is not None and self._grammar.is_close(first.group()) else None
        if stray is None:
            delta = super().feed(chunk)
            return {**delta, "assistant": leak + delta["assistant"]}
        before = super().feed({**chunk, "content": content[: stray.start()]})
        after = super().feed({"content": content[stray.end() :], "reasoning": None})
        return {
            "assistant": leak + before["assistant"] + stray.group() + after["assistant"],
            "thinking": before["thinking"] + after["thinking"],
        }


#: Every normalizer here, by attribute name.
ALL = ("DropsTrailingPartial", "StrayCloseAndSplitLt")
