"""The normalizer's two shapes: a stream chunk in, the channels out."""

from __future__ import annotations

from dataclasses import dataclass

#: The two output channels, in the order every delta and report names them.
CHANNELS = ("assistant", "thinking")


@dataclass(frozen=True, slots=True)
class Chunk:
    content: str | None = None
    reasoning: str | None = None

    def to_json(self) -> dict[str, str | None]:
        return {"content": self.content, "reasoning": self.reasoning}


@dataclass(frozen=True, slots=True)
class Channels:
    assistant: str
    thinking: str

    def to_json(self) -> dict[str, str]:
        return {"assistant": self.assistant, "thinking": self.thinking}
