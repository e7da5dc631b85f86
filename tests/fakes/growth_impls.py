"""Normalizers with correct output and a known cost curve, for the growth check (SPEC.md 14):
one whose work per chunk grows with the stream so far, and linear ones.

Usable as `python:tests.fakes.growth_impls:NAME` and, through `conformance.server`, as `cmd:`.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from typing import Any

from conformance.interface import implementation
from conformance.reference import Normalizer

DELIMITER = re.compile(r"</?think(?:ing)?>")


@implementation(name="rescans-everything")
class RescansEverything(Normalizer):
    """The reference's output, but every chunk also re-scans the whole text received so far
    for delimiters, as parsers that look at the accumulated `current_text` do: the work per
    chunk grows with the stream, so a stream costs the square of its length."""

    def __init__(self, options: Mapping[str, Any] | None = None) -> None:
        super().__init__(options)
        self.received = ""
        self.delimiters = 0

    def feed(self, chunk: Mapping[str, Any]) -> dict[str, str]:  # type: ignore[override]
        self.received += chunk.get("content") or ""
        self.delimiters = len(DELIMITER.findall(self.received))
        return super().feed(chunk)


@implementation(name="keeps-everything")
class KeepsEverything(Normalizer):
    """The reference's output, also keeping the whole text received so far (in a list, joined
    once at the end): more memory, but constant work per chunk."""

    def __init__(self, options: Mapping[str, Any] | None = None) -> None:
        super().__init__(options)
        self.received: list[str] = []

    def feed(self, chunk: Mapping[str, Any]) -> dict[str, str]:  # type: ignore[override]
        self.received.append(chunk.get("content") or "")
        return super().feed(chunk)

    def finish(self) -> dict[str, str]:  # type: ignore[override]
        self.delimiters = len(DELIMITER.findall("".join(self.received)))
        return super().finish()


if __name__ == "__main__":  # `cmd:python tests/fakes/growth_impls.py RescansEverything`
    import sys

    from conformance.server import serve

    factory = globals()[sys.argv[1]]
    serve(factory, {"name": factory.conformance["name"], "version": "1", "language": "python"})


@implementation(name="slow-per-chunk")
class SlowPerChunk(Normalizer):
    """The reference's output at a tenth of a millisecond or more per chunk, as a client
    driven through HTTP takes: linear, but minutes for a long document in 1-character
    chunks."""

    def feed(self, chunk: Mapping[str, Any]) -> dict[str, str]:  # type: ignore[override]
        time.sleep(0.0001)
        return super().feed(chunk)
