"""The reference normalizer: SPEC.md made executable.

One scan of the content by the grammar (`conformance/model/grammar.py`: in C for exact
grammars where it is built, else compiled regular expressions) finds the delimiters, by a
piece they all share, and a possible delimiter prefix in the last characters of the text;
the normalizer routes the text between them. Texts of token size,
which repeat endlessly, have their scan remembered per grammar. The only state carried
between chunks is the held-back suffix that could still become a delimiter (bounded by the
grammar), three flags, and, under `unclosed_at_end: drop`, the open block's body, which that
option forbids releasing before the block closes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from conformance.model.grammar import Occurrence
from conformance.model.options import Options
from conformance.reference._harmony import Delta, HarmonyFrames


class Normalizer:
    """Splits one stream into channels: `feed` each chunk, then `finish` once.

    After `finish` the normalizer is back in its initial state, ready for a new stream.
    """

    __slots__ = (
        "_carry",
        "_done",
        "_drop_unclosed",
        "_frames",
        "_grammar",
        "_inside",
        "_keep",
        "_memo",
        "_native_only",
        "_native_seen",
        "_one_section",
        "_pending",
        "_short",
        "_start",
        "options",
    )

    def __init__(self, options: Options | Mapping[str, Any] | None = None) -> None:
        options = _options(options)
        self.options = options
        self._grammar = options.grammar
        starts = self._grammar.starts
        # With one start character a substring test decides the fast path.
        self._start = starts if len(starts) == 1 else None
        # Token-sized texts: their scans are remembered by the grammar.
        self._short = self._grammar.short
        self._memo = self._grammar.memo
        self._native_only = options.native_with_tags == "native_only"
        self._drop_unclosed = options.unclosed_at_end == "drop"
        self._one_section = options.sections == "one"
        # Harmony framing routes by message headers (`_harmony.py`), over this state.
        self._frames = HarmonyFrames(self) if options.framing == "harmony" else None
        self.reset()

    def reset(self) -> None:
        self._inside = self.options.start_in_reasoning
        # Under `sections: one`, whether the one block has ended: the rest is text.
        self._done = False
        self._carry = ""
        self._native_seen = False
        # Body text of the open block, kept until its close under `unclosed_at_end: drop`.
        self._pending: list[str] = []
        # How many leading characters of the carry are block body that arrived before the
        # first native reasoning: they still go to thinking under `native_only`.
        self._keep = 0
        if self._frames is not None:
            self._frames.reset()

    def feed(self, chunk: Mapping[str, Any]) -> Delta:
        reasoning = chunk.get("reasoning")
        content = chunk.get("content")
        thinking = self._native(reasoning) if reasoning else ""
        if self._frames is not None:
            return self._frames.feed(content, thinking)
        if not content:
            return {"assistant": "", "thinking": thinking}
        if self._done:
            return {"assistant": content, "thinking": thinking}
        carry = self._carry
        text = carry + content if carry else content
        start = self._start
        if start is not None and start not in text:
            # Fast path: nothing here can begin a delimiter.
            self._carry = ""
        else:
            grammar = self._grammar
            if len(text) <= self._short:
                scan = self._memo.get(text)
                if scan is None:
                    scan = grammar.scan_short(text)
            else:
                scan = grammar.scan(text)
            if scan.__class__ is not int:
                return self._apply(text, scan, thinking)  # type: ignore[arg-type]
            # No delimiter: all but the held-back suffix goes to the current channel.
            if scan < len(text):
                self._carry = text[scan:]
                text = text[:scan]
                if not text:
                    return {"assistant": "", "thinking": thinking}
            else:
                self._carry = ""
        if not self._inside:
            return {"assistant": text, "thinking": thinking}
        return {"assistant": "", "thinking": thinking + self._body(text)}

    def _native(self, reasoning: str) -> str:
        """Native reasoning: always thinking. Its first arrival fixes how much of an open
        block's held-back body still goes to thinking under `native_only`."""
        if not self._native_seen:
            self._native_seen = True
            if self._inside and self._native_only:
                self._keep = len(self._carry)
        return reasoning

    def finish(self) -> Delta:
        """End of stream: release everything held back, then reset."""
        if self._frames is not None:
            return self._frames.finish()
        text, self._carry = self._carry, ""
        assistant = ""
        thinking = ""
        if text:
            if self._inside:
                thinking = self._body(text)
            else:
                assistant = text
        # An unclosed block's pending body is dropped with the state.
        self.reset()
        return {"assistant": assistant, "thinking": thinking}

    def _apply(self, text: str, scan: tuple[tuple[Occurrence, ...], int], thinking: str) -> Delta:
        """Route `text` by its delimiter occurrences, and keep the held-back suffix."""
        occurrences, hold = scan
        assistant: list[str] = []
        thought: list[str] = [thinking]
        # Body text goes to thinking as it is unless an option holds some of it back.
        plain = not self._drop_unclosed and not (self._native_seen and self._native_only)
        inside = self._inside
        grammar = self._grammar
        pos = 0
        for begin, end, close in occurrences:
            marker = close and grammar.is_marker(text[begin:end])
            if marker and not inside:
                continue  # a tool marker outside a block is text
            if begin > pos:
                if not inside:
                    assistant.append(text[pos:begin])
                elif plain:
                    thought.append(text[pos:begin])
                else:
                    thought.append(self._body(text[pos:begin]))
            if not close:
                # An open inside a block does not nest: it is stripped and ignored.
                inside = True
            elif inside:
                inside = False
                if self._pending:
                    thought.append("".join(self._pending))
                    self._pending.clear()
                if self._one_section:
                    self._done = True
            # An orphan close (outside any block) is stripped; the text before it stays. A
            # tool marker ends the block and stays, text of the assistant channel.
            pos = begin if marker else end
            # Body before a delimiter was kept (`_body`); after it, none is.
            self._keep = 0
            if self._done:
                # One section per message: what follows its end is text, delimiters too.
                self._inside = False
                self._carry = ""
                assistant.append(text[pos:])
                return {"assistant": "".join(assistant), "thinking": "".join(thought)}
        self._inside = inside
        if hold > pos:
            self._route(text[pos:hold], assistant, thought)
        self._carry = text[hold:]
        return {"assistant": "".join(assistant), "thinking": "".join(thought)}

    def _route(self, text: str, assistant: list[str], thought: list[str]) -> None:
        if self._inside:
            thought.append(self._body(text))
        else:
            assistant.append(text)

    def _body(self, text: str) -> str:
        """Block body text: what of it reaches thinking now."""
        if self._native_seen and self._native_only:
            kept, self._keep = text[: self._keep], max(0, self._keep - len(text))
            text = kept
        if self._drop_unclosed:
            self._pending.append(text)
            return ""
        return text


def _options(options: Options | Mapping[str, Any] | None) -> Options:
    return options if isinstance(options, Options) else Options.from_mapping(options)


def normalize_stream(
    chunks: Iterable[Mapping[str, Any]], options: Options | Mapping[str, Any] | None = None
) -> list[Delta]:
    """Normalize a whole stream: one delta per chunk plus the final flush delta."""
    normalizer = Normalizer(options)
    deltas = [normalizer.feed(chunk) for chunk in chunks]
    deltas.append(normalizer.finish())
    return deltas


def normalize_whole(
    content: str | None,
    reasoning: str | None = None,
    options: Options | Mapping[str, Any] | None = None,
) -> Delta:
    """The non-streaming form: one message in, one split out."""
    normalizer = Normalizer(options)
    first = normalizer.feed({"content": content, "reasoning": reasoning})
    last = normalizer.finish()
    return {
        "assistant": first["assistant"] + last["assistant"],
        "thinking": first["thinking"] + last["thinking"],
    }


def join(deltas: Iterable[Mapping[str, str]]) -> Delta:
    """The final channel texts of a stream: its deltas joined."""
    assistant: list[str] = []
    thinking: list[str] = []
    for delta in deltas:
        assistant.append(delta["assistant"])
        thinking.append(delta["thinking"])
    return {"assistant": "".join(assistant), "thinking": "".join(thinking)}
