"""Normalizers that are wrong on purpose, one classic bug each, as `python:` implementations.

The harness must flag every one of them with the right verdict; see test_runner.py.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from conformance.contracts import ReferenceImplementation
from conformance.interface import implementation
from conformance.reference import Normalizer

OPEN = ("<think>", "<thinking>")
CLOSE = ("</think>", "</thinking>")
DELIMITER = re.compile(r"</?think(?:ing)?>")


class _Base:
    """Tag-splitting over one chunk's text at a time, with the state a delta needs."""

    def __init__(self) -> None:
        self.inside = False
        self.native = False

    def split(self, text: str) -> dict[str, str]:
        out = {"assistant": "", "thinking": ""}
        pos = 0
        for match in DELIMITER.finditer(text):
            out["thinking" if self.inside else "assistant"] += text[pos : match.start()]
            self.inside = not match.group().startswith("</")
            pos = match.end()
        out["thinking" if self.inside else "assistant"] += text[pos:]
        return out

    def feed(self, chunk: Mapping[str, Any]) -> dict[str, str]:
        out = self.split(chunk.get("content") or "")
        if chunk.get("reasoning"):
            self.native = True
            out["thinking"] = chunk["reasoning"] + out["thinking"]
        return out

    def finish(self) -> dict[str, str]:
        return {"assistant": "", "thinking": ""}


@implementation(name="no-carry")
class NoCarry(_Base):
    """Finds delimiters only within one chunk: a tag split across chunks leaks."""


@implementation(name="no-flush")
class NoFlush(Normalizer):
    """Holds back partial delimiters correctly but never flushes them at the end."""

    def finish(self) -> dict[str, str]:  # type: ignore[override]
        super().finish()
        return {"assistant": "", "thinking": ""}


@implementation(name="delayed-by-one-chunk")
class DelayedByOneChunk:
    """The reference's output, each chunk's delta released one chunk late: right text, held
    back longer than any possible delimiter needs."""

    def __init__(self) -> None:
        self.inner = Normalizer()
        self.last: dict[str, str] = {"assistant": "", "thinking": ""}

    def feed(self, chunk: Mapping[str, Any]) -> dict[str, str]:
        self.last, previous = dict(self.inner.feed(chunk)), self.last
        return previous

    def finish(self) -> dict[str, str]:
        end = self.inner.finish()
        return {key: self.last[key] + end[key] for key in end}


@implementation(name="leaks-orphan-close")
class LeaksOrphanClose(Normalizer):
    """Strips a close delimiter only when a block is open: an orphan `</think>` shows."""

    def __init__(self) -> None:
        super().__init__()
        self._opened = False

    def feed(self, chunk: Mapping[str, Any]) -> dict[str, str]:  # type: ignore[override]
        content = chunk.get("content") or ""
        if not self._opened and any(tag in content for tag in OPEN):
            self._opened = True
        if not self._opened:
            return {"assistant": content, "thinking": chunk.get("reasoning") or ""}
        return dict(super().feed(chunk))


@implementation(name="per-chunk-regex")
class PerChunkRegex:
    """Applies `<think>.*?</think>` to each chunk: a block spanning chunks leaks whole."""

    def feed(self, chunk: Mapping[str, Any]) -> dict[str, str]:
        content = chunk.get("content") or ""
        bodies = re.findall(r"<think>(.*?)</think>", content, flags=re.S)
        visible = re.sub(r"<think>.*?</think>", "", content, flags=re.S)
        return {"assistant": visible, "thinking": (chunk.get("reasoning") or "") + "".join(bodies)}

    def finish(self) -> dict[str, str]:
        return {"assistant": "", "thinking": ""}


@implementation(name="duplicates-native")
class DuplicatesNative(Normalizer):
    """Declares the default (native only) but merges tag bodies with native reasoning."""

    def __init__(self) -> None:
        super().__init__({"native_with_tags": "merge"})


class _Buffered:
    """Runs the reference but releases everything at the end, through `post`."""

    def __init__(self) -> None:
        self.inner = Normalizer()
        self.text = {"assistant": "", "thinking": ""}

    def feed(self, chunk: Mapping[str, Any]) -> dict[str, str]:
        for key, value in self.inner.feed(chunk).items():
            self.text[key] += value
        return {"assistant": "", "thinking": ""}

    def finish(self) -> dict[str, str]:
        for key, value in self.inner.finish().items():
            self.text[key] += value
        return self.post(self.text)

    def post(self, text: dict[str, str]) -> dict[str, str]:
        return text


@implementation(name="buffers-everything")
class BuffersEverything(_Buffered):
    """Correct final text, but nothing is released before the end of the stream."""


@implementation(name="trims-whitespace")
class TrimsWhitespace(_Buffered):
    """Trims both channels at the end, as many clients do."""

    def post(self, text: dict[str, str]) -> dict[str, str]:
        return {key: value.strip() for key, value in text.items()}


@implementation(name="strips-every-tag")
class StripsEveryTag(_Buffered):
    """Removes every `<...>` from the answer: over-strips `Vec<T>`, `<thinker>`, HTML."""

    def post(self, text: dict[str, str]) -> dict[str, str]:
        return {**text, "assistant": re.sub(r"<[^<>]*>", "", text["assistant"])}


@implementation(name="counts-nesting")
class CountsNesting(_Base):
    """Treats an open inside a block as nesting: one stray `<think>` hides the answer."""

    def __init__(self) -> None:
        super().__init__()
        self.depth = 0

    def split(self, text: str) -> dict[str, str]:
        out = {"assistant": "", "thinking": ""}
        pos = 0
        for match in DELIMITER.finditer(text):
            out["thinking" if self.depth else "assistant"] += text[pos : match.start()]
            self.depth = max(0, self.depth + (-1 if match.group().startswith("</") else 1))
            pos = match.end()
        out["thinking" if self.depth else "assistant"] += text[pos:]
        return out


@implementation(name="ignores-case")
class IgnoresCase:
    """Matches delimiters in any case under exact matching: `<THINK>` is eaten."""

    def __init__(self) -> None:
        self.inner = Normalizer({"matching": "tolerant"})

    def feed(self, chunk: Mapping[str, Any]) -> dict[str, str]:
        return dict(self.inner.feed(chunk))

    def finish(self) -> dict[str, str]:
        return dict(self.inner.finish())


@implementation(name="raises")
class Raises(Normalizer):
    """Raises on any chunk mentioning `thinking`."""

    def feed(self, chunk: Mapping[str, Any]) -> dict[str, str]:  # type: ignore[override]
        if "thinking" in (chunk.get("content") or ""):
            raise ValueError("cannot handle <thinking>")
        return dict(super().feed(chunk))


@implementation(name="exits-its-process")
class ExitsItsProcess(Normalizer):
    """Right until its 200th chunk, when it ends the whole process (exit status 3), as a
    library crashing in native code would."""

    fed = 0

    def feed(self, chunk: Mapping[str, Any]) -> dict[str, str]:  # type: ignore[override]
        ExitsItsProcess.fed += 1
        if ExitsItsProcess.fed == 200:
            os._exit(3)
        return dict(super().feed(chunk))


@implementation(name="wrong-delta-count")
class WrongDeltaCount:
    """Returns no delta at all for empty chunks (`None` instead of a delta)."""

    def __init__(self) -> None:
        self.inner = Normalizer()

    def feed(self, chunk: Mapping[str, Any]) -> Any:
        delta = self.inner.feed(chunk)
        return delta if (chunk.get("content") or chunk.get("reasoning")) else None

    def finish(self) -> dict[str, str]:
        return dict(self.inner.finish())


# --- the other contracts (docs/contracts.md) ---------------------------------------------


@implementation(name="render-drops-close")
class RenderDropsClose(ReferenceImplementation):
    """Renders thinking sections but never closes them before the answer."""

    def render(self, **payload: Any) -> dict[str, Any]:
        outputs = super().render(**payload)["outputs"]
        return {"outputs": [output.replace("\n---\n\n", "") for output in outputs]}


@implementation(name="egress-sends-empty-reasoning")
class EgressSendsEmptyReasoning(ReferenceImplementation):
    """Sends `reasoning_content: ""` on assistant messages without reasoning (EC-007)."""

    def egress(self, **payload: Any) -> dict[str, Any]:
        body = super().egress(**payload)
        for message in body.get("messages", ()):
            if message.get("role") == "assistant":
                message.setdefault("reasoning_content", "")
        return body


@implementation(name="egress-mutates-history")
class EgressMutatesHistory(ReferenceImplementation):
    """Strips stored thinking blocks from the history it was given (BR-002, BR-009)."""

    def egress(self, **payload: Any) -> dict[str, Any]:
        for message in payload.get("history") or ():
            if isinstance(message, dict):
                message.pop("thinking", None)
        return super().egress(**payload)


@implementation(name="huge-reply")
class HugeReply(Normalizer):
    """Answers the right split, then floods the assistant channel at the end of the stream
    with SIZE characters (2 MB): a failure whose actual text is enormous, twice what
    tests/test_session_robustness.py allows all the reports of its run together."""

    SIZE = 2_000_000

    def finish(self) -> dict[str, str]:  # type: ignore[override]
        out = dict(super().finish())
        out["assistant"] += "x" * self.SIZE
        return out


SEED = {"open": "<seed:think>", "close": "</seed:think>"}


@implementation(name="seed-also-strips-think", options={"delimiters": [SEED]})
class SeedAlsoStripsThink(Normalizer):
    """Declares the custom grammar `<seed:think>` alone, but also strips the default tags
    (a parser that keeps `<think>` handling next to its model's own tags)."""

    def __init__(self) -> None:
        super().__init__(
            {
                "delimiters": [
                    SEED,
                    {"open": "<think>", "close": "</think>"},
                    {"open": "<thinking>", "close": "</thinking>"},
                ]
            }
        )


@implementation(name="start-misses-split-close", options={"start_in_reasoning": True})
class StartMissesSplitClose:
    """Starts inside reasoning, but looks for the first close within one chunk: a close
    split across chunks is never found, and its pieces and the answer stay reasoning."""

    def __init__(self) -> None:
        self.rest: Normalizer | None = None

    def feed(self, chunk: Mapping[str, Any]) -> dict[str, str]:
        if self.rest is not None:
            return dict(self.rest.feed(chunk))
        content = chunk.get("content") or ""
        native = chunk.get("reasoning") or ""
        before, found, after = content.partition("</think>")
        if not found:
            return {"assistant": "", "thinking": native + content}
        self.rest = Normalizer()
        out = dict(self.rest.feed({"content": after, "reasoning": None}))
        return {"assistant": out["assistant"], "thinking": native + before + out["thinking"]}

    def finish(self) -> dict[str, str]:
        return (
            dict(self.rest.finish()) if self.rest is not None else {"assistant": "", "thinking": ""}
        )
