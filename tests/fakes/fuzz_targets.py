"""Normalizers with bugs no corpus case triggers: the fuzzer must find each one.

Every one passes `conformance run` on the bundled corpus (tests assert it), and each breaks
in one of the ways real normalizers do once inputs get unlucky.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from conformance.interface import implementation
from conformance.reference import Normalizer


@implementation(name="empty-chunk-clears-carry")
class EmptyChunkClearsCarry(Normalizer):
    """An empty chunk inside a block forgets a held partial delimiter."""

    def feed(self, chunk: Mapping[str, Any]) -> Any:
        if chunk.get("content") == "" and self._inside and len(self._carry) >= 6:
            self._carry = ""
        return super().feed(chunk)


@implementation(name="three-pieces")
class ThreePieces(Normalizer):
    """Holds a partial delimiter across one chunk boundary, not two: when a delimiter that
    started as the piece `<t` is still incomplete after two more pieces
    of two or more characters, the held text is lost."""

    def __init__(self, options: Any = None) -> None:
        super().__init__(options)
        #: Pieces the held text was built from, when its first piece had two characters.
        self._pieces = 0

    def feed(self, chunk: Mapping[str, Any]) -> Any:
        content = chunk.get("content") or ""
        carry = self._carry
        if (
            self._pieces >= 2
            and len(content) >= 2
            and self._grammar.prefix.fullmatch(carry + content)
        ):
            self._carry, self._pieces = "", 0
            return super().feed(chunk)
        delta = super().feed(chunk)
        if not content:
            return delta
        if carry and self._pieces and len(content) >= 2 and self._carry == carry + content:
            self._pieces += 1
        else:
            self._pieces = 1 if self._carry == "<t" and content.endswith("<t") else 0
        return delta


@implementation(name="native-flushes-carry")
class NativeFlushesCarry(Normalizer):
    """A native reasoning step that arrives while part of a close delimiter is held outside
    a block releases it as answer text."""

    def feed(self, chunk: Mapping[str, Any]) -> Any:
        if chunk.get("reasoning") and not self._inside and self._carry.startswith("</"):
            carry, self._carry = self._carry, ""
            delta = super().feed(chunk)
            return {**delta, "assistant": carry + delta["assistant"]}
        return super().feed(chunk)


@implementation(name="near-miss-close")
class NearMissClose(Normalizer):
    """Treats `</thinkk>` (a doubled letter) as a close delimiter."""

    def feed(self, chunk: Mapping[str, Any]) -> Any:
        content = chunk.get("content")
        if content and "</thinkk>" in content:
            chunk = {**chunk, "content": content.replace("</thinkk>", "</think>")}
        return super().feed(chunk)


@implementation(name="flush-duplicates")
class FlushDuplicates(Normalizer):
    """At the end of the stream inside a block, a held part of a close delimiter seven to nine
    characters long (`</think` to `</thinkin`) is released twice."""

    def finish(self) -> Any:
        carry, inside = self._carry, self._inside
        delta = super().finish()
        if inside and carry.startswith("</t") and 7 <= len(carry) <= 9:
            return {**delta, "thinking": delta["thinking"] + carry}
        return delta


@implementation(name="later-block")
class LaterBlock(Normalizer):
    """After two blocks have closed, a block opened with a different tag name than the one
    before it stays in the answer (when its open delimiter arrives in one piece)."""

    OPEN = re.compile(r"<(think|thinking)>")

    def __init__(self, options: Any = None) -> None:
        super().__init__(options)
        self._closed = 0
        self._last: str | None = None

    def feed(self, chunk: Mapping[str, Any]) -> Any:
        content = chunk.get("content") or ""
        names = self.OPEN.findall(content)
        if self._closed >= 2 and not self._inside and names and names[0] != self._last:
            text, self._carry = self._carry + content, ""
            return {"assistant": text, "thinking": chunk.get("reasoning") or ""}
        was_inside = self._inside
        delta = super().feed(chunk)
        closes = content.count("</think") + (
            was_inside and not self._inside and "</" not in content
        )
        self._closed += closes
        if names:
            self._last = names[-1]
        return delta


@implementation(name="byte-offsets")
class ByteOffsets(Normalizer):
    """Measures the held-back suffix in UTF-8 bytes: with non-ASCII text before a split
    delimiter in the same chunk, part of the delimiter leaks into the answer."""

    def feed(self, chunk: Mapping[str, Any]) -> Any:
        content = chunk.get("content") or ""
        delta = super().feed(chunk)
        carry = self._carry
        two_byte = sum(0xA1 <= ord(c) < 0x250 for c in content)
        extra = len(content.encode()) - len(content)
        if carry and not self._inside and two_byte and extra == two_byte:
            leak = min(extra, len(carry) - 1)
            self._carry = carry[leak:]
            return {**delta, "assistant": delta["assistant"] + carry[:leak]}
        return delta


#: Every normalizer here, by attribute name (the `python:tests.fakes.fuzz_targets:NAME` spec).
ALL = (
    "EmptyChunkClearsCarry",
    "ThreePieces",
    "NativeFlushesCarry",
    "NearMissClose",
    "FlushDuplicates",
    "LaterBlock",
    "ByteOffsets",
)
