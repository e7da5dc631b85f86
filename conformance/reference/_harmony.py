"""The reference normalizer's routing under harmony framing (SPEC.md 5.8): gpt-oss messages
routed by their headers, over the same state and options as the tag routing.

One scan of each text by the grammar of harmony's tokens finds the tokens and the held-back
suffix that could still become one; between them, text goes where the state says: outside
any message to the assistant channel, into the header being read, or into the body of the
current message by its route (`conformance.model.harmony.route`).
"""

from __future__ import annotations

from typing import Protocol

from conformance.model import harmony
from conformance.model.grammar import Grammar
from conformance.model.options import Options

#: One output step: the text each channel gained, `{"assistant": str, "thinking": str}`
#: (a plain dict, so that it is the interface's `Mapping[str, str]` too).
Delta = dict[str, str]


class Normalizer(Protocol):
    """The state of `_normalizer.Normalizer` this routing reads and writes."""

    options: Options
    _carry: str
    _grammar: Grammar
    _inside: bool
    _keep: int
    _pending: list[str]

    def _body(self, text: str) -> str: ...

    def reset(self) -> None: ...


#: Where text goes between tokens.
_OUTSIDE, _HEADER, _BODY = "outside", "header", "body"


class HarmonyFrames:
    """The routing of one `Normalizer` under `framing: harmony`: it keeps the normalizer's
    held-back suffix, block flag and option state (`_body`), and adds the message state."""

    __slots__ = ("_header", "_normalizer", "_state", "_where")

    def __init__(self, normalizer: Normalizer) -> None:
        self._normalizer = normalizer
        self.reset()

    def reset(self) -> None:
        self._header: list[str] = []
        start = self._normalizer.options.start_in_reasoning
        self._state = _BODY if start else _OUTSIDE
        self._where: harmony.Route = "thinking" if start else "assistant"

    def feed(self, content: str | None, thinking: str) -> Delta:
        if not content:
            return {"assistant": "", "thinking": thinking}
        normalizer = self._normalizer
        text = normalizer._carry + content
        scan = normalizer._grammar.scan(text)
        occurrences, hold = ((), scan) if isinstance(scan, int) else scan
        assistant: list[str] = []
        thought = [thinking]
        pos = 0
        for begin, end, _ in occurrences:
            self._text(text[pos:begin], assistant, thought)
            self._token(text[begin:end], assistant, thought)
            pos = end
            # Body before a token was kept (`_body`); after it, none is.
            normalizer._keep = 0
        self._text(text[pos:hold], assistant, thought)
        normalizer._carry = text[hold:]
        return {"assistant": "".join(assistant), "thinking": "".join(thought)}

    def finish(self) -> Delta:
        """End of stream: release what is held back (a header never finished is framing,
        and goes nowhere), then reset the normalizer."""
        assistant: list[str] = []
        thought: list[str] = []
        self._text(self._normalizer._carry, assistant, thought)
        self._normalizer.reset()
        return {"assistant": "".join(assistant), "thinking": "".join(thought)}

    def _text(self, text: str, assistant: list[str], thought: list[str]) -> None:
        if not text:
            return
        if self._state == _HEADER:
            self._header.append(text)
        elif self._state == _BODY and self._where == "thinking":
            thought.append(self._normalizer._body(text))
        else:
            assistant.append(text)

    def _token(self, token: str, assistant: list[str], thought: list[str]) -> None:
        state = self._state
        if state == _HEADER:
            if token == harmony.START:
                self._header = [token]  # a new message: the unfinished header was framing
            elif token == harmony.MESSAGE:
                self._open("".join(self._header) + token, assistant)
            elif token in harmony.ENDS:
                self._header = []
                self._state = _OUTSIDE
            else:
                self._header.append(token)
            return
        if state == _BODY:
            if token in harmony.ENDS or token in harmony.HEADS:
                # A header inside a message ends it, as its end token would.
                self._close(token if token in harmony.ENDS else "", assistant, thought)
            elif self._where == "tool":
                assistant.append(token)
            # `<|message|>` and `<|constrain|>` in a body are framing: stripped.
            if token not in harmony.HEADS:
                return
        if token in harmony.HEADS:
            self._header = [token]
            self._state = _HEADER
        elif token == harmony.MESSAGE:
            self._open(token, assistant)
        # An end token or `<|constrain|>` outside any message is stripped.

    def _open(self, header: str, assistant: list[str]) -> None:
        self._header = []
        self._state = _BODY
        self._where = harmony.route(header)
        if self._where == "tool":
            assistant.append(header)
        self._normalizer._inside = self._where == "thinking"

    def _close(self, end: str, assistant: list[str], thought: list[str]) -> None:
        normalizer = self._normalizer
        if self._where == "tool":
            assistant.append(end)
        if normalizer._inside and normalizer._pending:
            thought.append("".join(normalizer._pending))
            normalizer._pending.clear()
        normalizer._inside = False
        self._state = _OUTSIDE
