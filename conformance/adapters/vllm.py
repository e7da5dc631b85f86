"""vLLM's reasoning parsers, `deepseek_r1` and `qwen3`, driven through vLLM's OpenAI-compatible
chat serving path with a stand-in tokenizer.

    conformance run --impl vllm-deepseek-r1=python:conformance.adapters.vllm:DeepSeekR1
    conformance run --impl vllm-qwen3=python:conformance.adapters.vllm:Qwen3

As the server calls them (checked against `vllm/entrypoints/openai/chat_completion/serving.py`
and `stream_processor.py` of the installed vLLM): `OpenAIServingChat` composes a `Parser` class
with `ParserManager.get_parser(reasoning_parser_name=...)` and makes one per request
(`parser_cls(tokenizer, request.tools, chat_template_kwargs=..., model_config=...)`). A stream
goes through `ChatStreamProcessor.step(delta_text, delta_token_ids, finish_reason,
prompt_token_ids)` once per engine output, which calls `Parser.parse_delta`: that checks the
prompt once (`is_reasoning_end`), calls the reasoning parser's `extract_reasoning_streaming`
only until it reports the end of reasoning (`is_reasoning_end_streaming`), and from then on
passes every delta through as content. A whole response goes through `Parser.parse(text,
request)` after `set_prompt_token_ids`. Calling `extract_reasoning_streaming` directly, as this
adapter once did, keeps the reasoning parser running after the first close tag and hides what
the server shows (a second `<think>` block stays visible through the server).

The prompt is the one the chat template renders for generation: DeepSeek-R1's ends with an
opened `<think>`, Qwen3's with the assistant header; neither holds `</think>`, so both start
inside reasoning. The end of the stream is one more engine output with no text and a finish
reason (`finished=True`), since the adapter does not know which chunk is the last.

The parsers decide on token IDs, not text. No model is loaded: `StandInTokenizer` gives each
delimiter of the models' chat format (`<think>`, `</think>`, `<tool_call>`, ...) one ID, as
the real tokenizers do, and every other character an ID of its own. A delimiter counts as
one token only when it lies whole inside one chunk; split across chunks it is plain text,
which in vLLM cannot happen for a special token but does for models whose tags are not
special tokens.

vLLM parses model output on the server, where no native reasoning field exists yet: the
adapter passes a chunk's native reasoning straight to the thinking channel (merge). vLLM needs
torch; `pip install torch==2.13.0` then `pip install --no-deps vllm` with the `vllm` extra
keeps it to the CPU build (docs/ecosystem.md).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache
from typing import Any

from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
from vllm.entrypoints.openai.chat_completion.stream_processor import ChatStreamProcessor
from vllm.parser import ParserManager

from ..interface import Chunk, Delta, implementation
from .common import delta, installed_version, native

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
    #: The end of the prompt the model's chat template renders for generation.
    prompt: str

    def __init__(self) -> None:
        self._parser_cls = ParserManager.get_parser(reasoning_parser_name=self.parser_name)
        self._prompt_ids = _tokenizer().encode(self.prompt)
        self._processor: ChatStreamProcessor | None = None

    def _parser(self) -> Any:
        assert self._parser_cls is not None
        return self._parser_cls(_tokenizer(), None, chat_template_kwargs={}, model_config=None)

    def _step(self, text: str, finish_reason: str | None) -> Any:
        if self._processor is None:
            self._processor = ChatStreamProcessor(
                _request(), self._parser(), enable_auto_tools=False, parser_cls=self._parser_cls
            )
        ids = _tokenizer().encode(text)
        return self._processor.step(text, ids, finish_reason, self._prompt_ids).delta

    def feed(self, chunk: Chunk) -> Delta:
        text = chunk.get("content") or ""
        if not text:
            # No token was generated: the engine has no output for this step.
            return delta("", native(chunk))
        message = self._step(text, None)
        if message is None:
            return delta("", native(chunk))
        return delta(message.content, native(chunk) + (message.reasoning or ""))

    def finish(self) -> Delta:
        message = self._step("", "stop")
        self._processor = None
        return delta() if message is None else delta(message.content, message.reasoning)

    def whole(self, content: str | None, reasoning: str | None) -> Delta:
        parser = self._parser()
        parser.set_prompt_token_ids(self._prompt_ids)
        found, normal, _ = parser.parse(content or "", _request())
        return delta(normal, (reasoning or "") + (found or ""))


#: The parsers know `<think>` alone (SPEC 2.2 `think_only`).
_OPTIONS = {"delimiters": "think_only", "start_in_reasoning": True, "native_with_tags": "merge"}


@implementation(name="vllm (deepseek_r1)", version=VERSION, options=_OPTIONS)
class DeepSeekR1(_VLLM):
    parser_name = "deepseek_r1"
    prompt = "<|im_start|>assistant\n<think>\n"


@implementation(name="vllm (qwen3)", version=VERSION, options=_OPTIONS)
class Qwen3(_VLLM):
    parser_name = "qwen3"
    prompt = "<|im_start|>assistant\n"
