"""Normalizers wrong on purpose under the model-family profiles (SPEC.md 5.7-5.9): gpt-oss's
harmony messages, and the tool markers of Qwen3 and Kimi K2. Each is the reference under its
family's profile, which it declares, with bugs that engines' parsers have had:

    conformance run --impl python:tests.fakes.family_bugs:SplitHeaderShown \\
        --options '{"profile": "gpt_oss"}'
    conformance fuzz --impl "cmd:python tests/fakes/family_bugs.py ToolCallThought"
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from conformance.interface import implementation
from conformance.model import harmony
from conformance.reference import Normalizer
from conformance.reference._harmony import HarmonyFrames

GPT_OSS = {"profile": "gpt_oss"}
QWEN3 = {"profile": "qwen3"}
KIMI_K2 = {"profile": "kimi_k2"}


class _ToolCallsThink(HarmonyFrames):
    """Harmony routing that sends a tool call's body to thinking, as an analysis message's
    (its header and end token dropped), instead of the whole message to the answer."""

    def _open(self, header: str, assistant: list[str]) -> None:
        super()._open(header, assistant)
        if self._where == "tool":
            assistant.pop()  # the header the reference keeps for the tool parser
            self._where = "thinking"
            self._normalizer._inside = True


@implementation(name="split-header-shown", options=GPT_OSS)
class SplitHeaderShown(Normalizer):
    """A chunk that ends while a message header is still being read shows the header so far
    in the answer (`<|channel|>` + `analysis<|message|>` shows `<|channel|>`): the header's
    tokens came in separate chunks, as they do when each token is its own chunk."""

    def __init__(self) -> None:
        super().__init__(GPT_OSS)

    def feed(self, chunk: Mapping[str, Any]) -> dict[str, str]:  # type: ignore[override]
        delta = dict(super().feed(chunk))
        frames = self._frames
        assert frames is not None
        if frames._state == "header":
            delta["assistant"] += "".join(frames._header)
        return delta


@implementation(name="tool-call-thought", options=GPT_OSS)
class ToolCallThought(Normalizer):
    """A tool call (a message whose header names a recipient, `to=functions.get_weather`)
    routed by its channel alone: its arguments reach thinking, and the tool parser never sees
    the call."""

    def __init__(self) -> None:
        super().__init__(GPT_OSS)
        self._frames = _ToolCallsThink(self)


@implementation(name="marker-stays-in-thinking", options=QWEN3)
class MarkerStaysInThinking(Normalizer):
    """Tool markers not scanned for: a `<tool_call>` inside an open block does not end it,
    and the call stays in thinking (the engines' parsers before they learned the marker)."""

    def __init__(self) -> None:
        super().__init__({**QWEN3, "tool_markers": []})


@implementation(name="marker-dropped", options=KIMI_K2)
class MarkerDropped(Normalizer):
    """A tool marker taken for a close delimiter: it ends the block but is stripped, so the
    tool parser never sees the section begin (and outside a block, it is stripped as an
    orphan close)."""

    def __init__(self) -> None:
        marker = "<|tool_calls_section_begin|>"
        pairs = [["<think>", "</think>"], ["<think>", marker]]
        super().__init__({**KIMI_K2, "tool_markers": [], "delimiters": pairs})


@implementation(name="three-harmony-bugs", options=GPT_OSS)
class ThreeHarmonyBugs(SplitHeaderShown):
    """Three independent bugs under harmony framing: a split header shown
    (`SplitHeaderShown`), tool calls sent to thinking (`ToolCallThought`), and an end token
    outside any message (`<|return|>` after the answer's end) shown in the answer instead of
    stripped."""

    def __init__(self) -> None:
        super().__init__()
        self._frames = _ToolCallsThink(self)

    def feed(self, chunk: Mapping[str, Any]) -> dict[str, str]:
        frames = self._frames
        assert frames is not None
        content = chunk.get("content") or ""
        if frames._state == "outside" and not self._carry and content in harmony.ENDS:
            return {"assistant": content, "thinking": chunk.get("reasoning") or ""}
        return super().feed(chunk)


#: Every normalizer here, by attribute name.
ALL = (
    "SplitHeaderShown",
    "ToolCallThought",
    "MarkerStaysInThinking",
    "MarkerDropped",
    "ThreeHarmonyBugs",
)


if __name__ == "__main__":  # `cmd:python tests/fakes/family_bugs.py NAME`
    import sys

    from conformance.server import serve

    factory = globals()[sys.argv[1]]
    meta = factory.conformance
    serve(factory, {"name": meta["name"], "version": "1", "language": "python"}, meta["options"])
