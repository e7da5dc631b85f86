"""hermes-agent: the streaming think scrubber every delta of a reply goes through.

    conformance run --impl hermes-agent=python:conformance.adapters.hermes:ThinkScrubber

`agent/think_scrubber.py`'s `StreamingThinkScrubber` is what hermes-agent's
`AIAgent._fire_stream_delta` (run_agent.py) runs each streamed content delta through before
any consumer (CLI, gateway, API server, TTS) sees it; `_reset_stream_delivery_tracking`
calls its `flush()` when the reply ends, and `reset()` starts each turn. It removes tag
blocks (`<think>`, `<thinking>`, `<reasoning>`, `<thought>`, `<REASONING_SCRATCHPAD>`, any
case) and holds back a possible partial tag; what it removes is not shown anywhere. Native
reasoning does not go through it: hermes-agent hands `reasoning_content` deltas to
`_fire_reasoning_delta` unchanged (agent/chat_completion_helpers.py), which is the thinking
shown here. Whole messages are a one-chunk stream, as a one-delta reply goes through it.

hermes-agent pins its dependency tree to versions this project's environment cannot take;
the scrubber needs only the standard library, so the package goes in with
`pip install --no-deps hermes-agent` and only `agent.think_scrubber` is imported.
"""

from __future__ import annotations

from agent.think_scrubber import StreamingThinkScrubber

from ..interface import Chunk, Delta, implementation
from .common import delta, installed_version, native


@implementation(
    name="hermes-agent (StreamingThinkScrubber)",
    version=installed_version("hermes-agent"),
    options={},
)
class ThinkScrubber:
    """One reply through a fresh scrubber (hermes-agent resets it at each turn)."""

    def __init__(self) -> None:
        self._scrubber = StreamingThinkScrubber()

    def feed(self, chunk: Chunk) -> Delta:
        return delta(self._scrubber.feed(chunk.get("content") or ""), native(chunk))

    def finish(self) -> Delta:
        return delta(self._scrubber.flush())
