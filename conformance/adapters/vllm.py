"""vLLM's reasoning parsers, one variant per model family of `engine_families.VLLM`, driven
through vLLM's OpenAI-compatible chat serving path with a stand-in tokenizer.

    conformance run --impl vllm-deepseek-r1=python:conformance.adapters.vllm:FAMILY.deepseek_r1
    conformance run --impl vllm-glm45=python:conformance.adapters.vllm:FAMILY.glm45

(`vllm:DeepSeekR1` and `vllm:Qwen3` still name the first two.) Each row of the table gives the
parser's name (`--reasoning-parser`), the end of the prompt the family's chat template renders
for generation, the request's `chat_template_kwargs` and the chat format's special tokens; the
variant declares the family profile with the options where vLLM differs from it.

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

The prompt is the end of the one the chat template renders for generation (DeepSeek-R1's ends
with an opened `<think>`, Qwen3's with the assistant header); where it holds no end token, the
parsers start inside reasoning. The end of the stream is one more engine output with no text
and a finish reason (`finished=True`), since the adapter does not know which chunk is the last.

The parsers decide on token IDs, not text. No model is loaded: `StandInTokenizer` gives each
special token of the family one ID, as the real tokenizers do (its profile's delimiters and
tool markers where they are special tokens, harmony's tokens, and the chat format's own from
the table), and every other character an ID of its own. A delimiter counts as
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

from ..interface import Chunk, Delta
from ..model import harmony
from ..model.options import Options
from .common import delta, installed_version, native
from .engine_families import VLLM, Variant, factories

VERSION = installed_version("vllm")
#: Character IDs start after the special tokens' IDs.
CHAR_BASE = 1000


class StandInTokenizer:
    """The part of a Hugging Face tokenizer the parsers use: a vocabulary with the special
    tokens, and a reversible encoding in which every other character is one token."""

    def __init__(self, special_tokens: Sequence[str]) -> None:
        self._ids = {token: index + 1 for index, token in enumerate(special_tokens)}
        self._tokens = {index: token for token, index in self._ids.items()}
        # Longest first: a token that is a prefix of another does not cut it short.
        ordered = sorted(special_tokens, key=len, reverse=True)
        self._pattern = re.compile("|".join(re.escape(t) for t in ordered) or "(?!)")

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


def special_tokens(variant: Variant) -> tuple[str, ...]:
    """The tokens that are one ID each for `variant`'s model: its profile's delimiters and
    tool markers when they are special tokens (harmony's tokens under harmony framing), and
    the chat format's own."""
    options = Options.from_mapping(variant.options)
    found: list[str] = list(variant.tokens)
    if options.framing == "harmony":
        found.extend(harmony.TOKENS)
    elif options.atomic_delimiters:
        delimiters = [d for pair in options.pairs for d in pair] + list(options.tool_markers)
        # A delimiter that starts with a token of the chat format is that token and text
        # (Gemma 4's `<|channel>` and `thought`).
        found.extend(d for d in delimiters if not any(d.startswith(t) for t in variant.tokens))
    return tuple(dict.fromkeys(found))


@cache
def _tokenizer(tokens: tuple[str, ...]) -> StandInTokenizer:
    return StandInTokenizer(tokens)


@cache
def _request(template_kwargs: tuple[tuple[str, Any], ...]) -> ChatCompletionRequest:
    return ChatCompletionRequest(
        messages=[{"role": "user", "content": "-"}],
        model="conformance",
        chat_template_kwargs=dict(template_kwargs) or None,
    )


class _VLLM:
    variant: Variant

    def __init__(self) -> None:
        self._parser_cls = ParserManager.get_parser(reasoning_parser_name=self.variant.parser)
        self._tokenizer = _tokenizer(special_tokens(self.variant))
        self._request = _request(tuple(sorted(self.variant.template_kwargs.items())))
        self._prompt_ids = self._tokenizer.encode(self.variant.prompt)
        self._processor: ChatStreamProcessor | None = None

    def _parser(self) -> Any:
        assert self._parser_cls is not None
        kwargs = dict(self.variant.template_kwargs)
        return self._parser_cls(
            self._tokenizer, None, chat_template_kwargs=kwargs, model_config=None
        )

    def _step(self, text: str, finish_reason: str | None) -> Any:
        if self._processor is None:
            self._processor = ChatStreamProcessor(
                self._request, self._parser(), enable_auto_tools=False, parser_cls=self._parser_cls
            )
        ids = self._tokenizer.encode(text)
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
        found, normal, _ = parser.parse(content or "", self._request)
        return delta(normal, (reasoning or "") + (found or ""))


#: One factory per family of `engine_families.VLLM` (`vllm:FAMILY.glm45`).
FAMILY = factories(_VLLM, VLLM, engine="vllm", version=VERSION, module=__name__)
#: The names the first two variants had.
DeepSeekR1 = FAMILY.deepseek_r1
Qwen3 = FAMILY.qwen3
