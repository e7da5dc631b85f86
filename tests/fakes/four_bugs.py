"""A normalizer with four independent bugs, one of them a close delimiter split across chunks
leaking into the answer: the first screen of a run must show each of them (issue 22).

    conformance run --impl python:tests.fakes.four_bugs:FourBugs
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from conformance.interface import implementation
from conformance.reference import Normalizer

OPEN = ("<think>", "<thinking>")
CLOSE = ("</think>", "</thinking>")


@implementation(name="four-bugs")
class FourBugs(Normalizer):
    """The reference with four bugs, each independent of the others:

    - split close: the start of a close delimiter held back at the end of a chunk is released
      into the answer when the next chunk completes it (`</thi` + `nk>` shows `</thi`);
    - orphan close: before any block opened, a chunk holding a whole close delimiter is shown
      as it is (`</think>` stays in the answer);
    - no flush: a partial delimiter held back at the end of the stream is dropped (`x<t` ends
      as `x`);
    - native plus tags: tag bodies are added to native reasoning, though it declares the
      default (native only).
    """

    def __init__(self) -> None:
        super().__init__({"native_with_tags": "merge"})
        self._opened = False

    def feed(self, chunk: Mapping[str, Any]) -> dict[str, str]:  # type: ignore[override]
        content = chunk.get("content") or ""
        held = self._carry
        if (
            not self._opened
            and not held
            and any(close in content for close in CLOSE)
            and not any(open_ in content for open_ in OPEN)
        ):
            return {"assistant": content, "thinking": chunk.get("reasoning") or ""}
        out = dict(super().feed(chunk))
        self._opened = self._opened or self._inside or any(o in held + content for o in OPEN)
        if held and any((held + content).startswith(close) for close in CLOSE):
            out["assistant"] = held + out["assistant"]
        return out

    def finish(self) -> dict[str, str]:  # type: ignore[override]
        self._carry = ""
        self._opened = False
        return dict(super().finish())
