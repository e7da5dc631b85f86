"""vLLM's reasoning parsers, `deepseek_r1` and `qwen3`, driven through a stand-in tokenizer.

    conformance run --impl vllm-deepseek-r1=python:conformance.adapters.vllm:DeepSeekR1
    conformance run --impl vllm-qwen3=python:conformance.adapters.vllm:Qwen3

The parsers come from `ReasoningParserManager.get_reasoning_parser(name)`, and are called as
vLLM's OpenAI-compatible server calls them: `extract_reasoning_streaming(previous_text,
current_text, delta_text, previous_token_ids, current_token_ids, delta_token_ids)` per chunk,
`finish_streaming()` at the end where the parser has one, and `extract_reasoning(text,
request)` for the whole form.

They decide on token IDs, not text. No model is loaded: `StandInTokenizer` gives each
delimiter of the models' chat format (`<think>`, `</think>`, `<tool_call>`, ...) one ID, as
the real tokenizers do, and every other character an ID of its own. A delimiter counts as
one token only when it lies whole inside one chunk; split across chunks it is plain text,
which in vLLM cannot happen for a special token but does for models whose tags are not
special tokens.

vLLM parses model output on the server, where no native reasoning field exists yet: the
adapter passes a chunk's native reasoning straight to the thinking channel (merge). Both
parsers start inside reasoning, as for models whose chat template opens the block in the
prompt. vLLM needs torch; `pip install torch==2.13.0` then `pip install --no-deps vllm`
with the `vllm` extra keeps it to the CPU build (docs/ecosystem.md).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache
from typing import Any

from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
from vllm.reasoning import ReasoningParserManager

from ..interface import Chunk, Delta, implementation
from ._common import delta, installed_version, native

VERSION = installed_version("vllm")
#: The delimiters of the DeepSeek-R1 and Qwen3 chat formats, each one token in those models.
SPECIAL_TOKENS = (
    "<think>",
    "</think>",
    "<tool_call>",
    "</tool_call>",
    "<|im_start|>",
    "<|im_end|>",
)
#: Character IDs start after the special tokens' IDs.
CHAR_BASE = 1000


class StandInTokenizer:
    """The part of a Hugging Face tokenizer the parsers use: a vocabulary with the special
    tokens, and a reversible encoding in which every other character is one token."""

    def __init__(self) -> None:
        self._ids = {token: index + 1 for index, token in enumerate(SPECIAL_TOKENS)}
        self._tokens = {index: token for token, index in self._ids.items()}
        self._pattern = re.compile("|".join(re.escape(t) for t in SPECIAL_TOKENS))

    def get_vocab(self) -> dict[str, int]:
        return dict(self._ids)

    @property
    def vocab(self) -> dict[str, int]:
        return self.get_vocab()

    def encode(self, text: str, add_special_tokens: bool = False, **_: Any) -> list[int]:
        ids: list[int] = []
        position = 0
        for match in self._pattern.finditer(text):
            ids.extend(CHAR_BASE + ord(c) for c in text[position : match.start()])
            ids.append(self._ids[match.group()])
            position = match.end()
        ids.extend(CHAR_BASE + ord(c) for c in text[position:])
        return ids

    def _token(self, token_id: int) -> str:
        if token_id in self._tokens:
            return self._tokens[token_id]
        return chr(token_id - CHAR_BASE) if token_id >= CHAR_BASE else ""

    def decode(self, ids: Sequence[int], **_: Any) -> str:
        return "".join(self._token(i) for i in ids)

    def convert_ids_to_tokens(self, ids: Sequence[int], **_: Any) -> list[str]:
        return [self._token(i) for i in ids]

    def convert_tokens_to_ids(self, tokens: str | Sequence[str]) -> int | list[int]:
        if isinstance(tokens, str):
            return self.encode(tokens)[0]
        return [self.encode(token)[0] for token in tokens]


@cache
def _tokenizer() -> StandInTokenizer:
    return StandInTokenizer()


@cache
def _request() -> ChatCompletionRequest:
    return ChatCompletionRequest(messages=[{"role": "user", "content": "-"}], model="conformance")


class _VLLM:
    parser_name: str

    def __init__(self) -> None:
        parser_class = ReasoningParserManager.get_reasoning_parser(self.parser_name)
        self._parser = parser_class(_tokenizer())
        self._text = ""
        self._ids: list[int] = []

    def feed(self, chunk: Chunk) -> Delta:
        text = chunk.get("content") or ""
        if not text:
            # No token was generated: vLLM has no step to parse.
            return delta("", native(chunk))
        ids = _tokenizer().encode(text)
        message = self._parser.extract_reasoning_streaming(
            self._text, self._text + text, text, self._ids, self._ids + ids, ids
        )
        self._text += text
        self._ids += ids
        if message is None:
            return delta("", native(chunk))
        return delta(message.content, native(chunk) + (message.reasoning or ""))

    def finish(self) -> Delta:
        finish = getattr(self._parser, "finish_streaming", None)
        message = finish() if finish is not None else None
        return delta() if message is None else delta(message.content, message.reasoning)

    def whole(self, content: str | None, reasoning: str | None) -> Delta:
        found, normal = self._parser.extract_reasoning(content or "", _request())
        return delta(normal, (reasoning or "") + (found or ""))


#: The parsers know `<think>` alone (SPEC 2.2 `think_only`).
_OPTIONS = {"delimiters": "think_only", "start_in_reasoning": True, "native_with_tags": "merge"}


@implementation(name="vllm (deepseek_r1)", version=VERSION, options=_OPTIONS)
class DeepSeekR1(_VLLM):
    parser_name = "deepseek_r1"


@implementation(name="vllm (qwen3)", version=VERSION, options=_OPTIONS)
class Qwen3(_VLLM):
    parser_name = "qwen3"
