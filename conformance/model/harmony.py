"""Harmony framing (SPEC.md 5.8): the special tokens of gpt-oss output, and what a message's
header makes of its body.

A harmony message is a header, `<|message|>`, a body, and an end token:
`<|channel|>analysis<|message|>We need...<|end|>` or, after `<|start|>`, a role first:
`<|start|>assistant<|channel|>final<|message|>Hi<|return|>`. The header names the channel
and, for a tool call, the recipient (`to=functions.get_weather`). Only the body is text,
except in a tool call, which reaches the assistant channel whole (tokens and header too) for
the tool parser after it.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Literal

from conformance.model.grammar import Grammar, compile_grammar

START = "<|start|>"
CHANNEL = "<|channel|>"
MESSAGE = "<|message|>"
CONSTRAIN = "<|constrain|>"
#: Tokens that end a message.
ENDS = ("<|end|>", "<|return|>", "<|call|>")
#: Tokens that begin a header.
HEADS = (START, CHANNEL)
TOKENS = (START, CHANNEL, MESSAGE, CONSTRAIN, *ENDS)

#: The open and close a `<think>` block is renamed to when a case is derived for harmony:
#: an `analysis` message, ended by `<|end|>`.
BLOCK_PAIR = (f"{CHANNEL}analysis{MESSAGE}", ENDS[0])

#: Where a message's body goes: thinking (`analysis`), assistant (`final`, `commentary`
#: without a recipient, any other channel), or the assistant channel whole, as a tool call
#: (any message with a recipient).
Route = Literal["thinking", "assistant", "tool"]

_RECIPIENT = re.compile(r"(?:^|\s)to=\S")


@lru_cache(maxsize=1)
def token_grammar() -> Grammar:
    """The scan of harmony's tokens: each token as a delimiter (every one of them is framing
    where it stands, and a cut one is held back until it completes or cannot)."""
    return compile_grammar(tuple((token, token) for token in TOKENS), False)


def route(header: str) -> Route:
    """Where the body of the message with this header goes. `header` is the raw text from the
    token that began it (`<|start|>` or `<|channel|>`) to `<|message|>`, tokens included."""
    if _RECIPIENT.search(_words(header)):
        return "tool"
    channel = _words(header.rpartition(CHANNEL)[2]).split() if CHANNEL in header else []
    if channel and channel[0] == "analysis":
        return "thinking"
    return "assistant"


def _words(text: str) -> str:
    for token in TOKENS:
        text = text.replace(token, " ")
    return text
