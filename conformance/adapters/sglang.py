"""SGLang's reasoning parser, one variant per model family of `engine_families.SGLANG`.

    conformance run --impl sglang-deepseek-r1=python:conformance.adapters.sglang:FAMILY.deepseek_r1
    conformance run --impl sglang-kimi-k2=python:conformance.adapters.sglang:FAMILY.kimi_k2

(`sglang:DeepSeekR1` and `sglang:Qwen3` still name the first two.)

`sglang.srt.parser.reasoning_parser.ReasoningParser` as SGLang's OpenAI-compatible server
calls it (checked against `sglang/srt/entrypoints/openai/serving_chat.py` of the installed
SGLang): a stream makes one parser per choice with `ReasoningParser(model_type,
request.stream_reasoning, force_reasoning, request)` (`_process_reasoning_stream`), calls
`parse_stream_chunk(delta)` on each engine output and, on the output that carries the finish
reason, `parse_stream_end()` after it; a whole response makes a parser with
`stream_reasoning=False` and calls `parse_non_stream(text)`. The adapter ends a stream with one
more output holding no text, since it does not know which chunk is the last.

`force_reasoning` is what the server computes for a default request (`template_manager.
force_reasoning or _get_reasoning_from_request(request)`), here from the detector's own
`reasoning_default` as the server falls back to it (`server_force_reasoning`): `always` forces
reasoning (DeepSeek-R1); a thinking toggle that defaults to on (`enable_thinking`, Qwen3, GLM,
Kimi K2, Nemotron, Granite thinking) forces it too, so those parsers start inside reasoning and
strip the start tag the model writes; `explicit_*` toggles (DeepSeek-V3 without `thinking`,
Gemma 4) leave it off unless the row's `chat_template_kwargs` turn it on. A request with
`chat_template_kwargs: {"enable_thinking": false}` gets the other behaviour.

The parser needs no server dependency, but `import sglang` runs `sglang/__init__.py`, which
imports torch, triton and the runtime. This module therefore registers the installed
`sglang` package without running that file and imports the parser module from it directly;
what the parser module itself imports comes from the `sglang` extra (install SGLang itself
with `pip install --no-deps sglang`, see docs/ecosystem.md).

SGLang parses model output on the server, where no native reasoning field exists yet: the
adapter passes a chunk's native reasoning straight to the thinking channel, so tag bodies are
always kept beside it (merge).
"""

from __future__ import annotations

import importlib.util
import sys
import types

from ..interface import Chunk, Delta
from .common import delta, installed_version, native
from .engine_families import SGLANG, Variant, factories


def _register_package(name: str) -> None:
    """Make the installed package `name` importable without running its `__init__.py`."""
    if name in sys.modules:
        return
    spec = importlib.util.find_spec(name)
    if spec is None or spec.submodule_search_locations is None:
        raise ImportError(f"{name} is not installed: pip install --no-deps {name}")
    package = types.ModuleType(name)
    package.__path__ = list(spec.submodule_search_locations)
    package.__spec__ = spec
    sys.modules[name] = package


_register_package("sglang")
from sglang.srt.entrypoints.openai.protocol import ChatCompletionRequest  # noqa: E402
from sglang.srt.parser.reasoning_parser import ReasoningParser  # noqa: E402

VERSION = installed_version("sglang")


def server_force_reasoning(model_type: str, request: ChatCompletionRequest) -> bool:
    """`force_reasoning` as `OpenAIServingChat._get_reasoning_from_request` computes it when
    the template gives no toggle of its own: from the detector's `reasoning_default` and the
    request's `chat_template_kwargs` (ReasoningParser then forces it for some model types)."""
    kwargs = request.chat_template_kwargs or {}
    if model_type == "minimax-m3":
        return kwargs.get("thinking_mode") == "enabled"
    if model_type == "hunyuan":
        return request.reasoning_effort not in (None, "none", "no_think")
    mode = ReasoningParser.DetectorMap[model_type]().reasoning_default
    if mode == "always":
        return True
    if mode == "mistral":
        return request.reasoning_effort not in (None, "none")
    if mode in ("thinking", "enable_thinking"):
        return not kwargs or kwargs.get(mode) is not False
    if mode in ("explicit_thinking", "explicit_enable_thinking"):
        return kwargs.get(mode.removeprefix("explicit_")) is True
    return False


class _SGLang:
    variant: Variant

    def __init__(self) -> None:
        self._parser: ReasoningParser | None = None
        self._request = ChatCompletionRequest(
            messages=[{"role": "user", "content": "-"}],
            model="conformance",
            chat_template_kwargs=dict(self.variant.template_kwargs) or None,
        )
        self._force = server_force_reasoning(self.variant.parser, self._request)

    def _new_parser(self, stream_reasoning: bool) -> ReasoningParser:
        return ReasoningParser(self.variant.parser, stream_reasoning, self._force, self._request)

    def _stream_parser(self) -> ReasoningParser:
        if self._parser is None:
            # The request's `stream_reasoning` defaults to true.
            self._parser = self._new_parser(True)
        return self._parser

    def feed(self, chunk: Chunk) -> Delta:
        reasoning, normal = self._stream_parser().parse_stream_chunk(chunk.get("content") or "")
        return delta(normal, native(chunk) + (reasoning or ""))

    def finish(self) -> Delta:
        parser = self._stream_parser()
        reasoning, normal = parser.parse_stream_chunk("")
        end_reasoning, end_normal = parser.parse_stream_end()
        self._parser = None
        return delta((normal or "") + (end_normal or ""), (reasoning or "") + (end_reasoning or ""))

    def whole(self, content: str | None, reasoning: str | None) -> Delta:
        found, normal = self._new_parser(False).parse_non_stream(content or "")
        return delta(normal, (reasoning or "") + (found or ""))


#: One factory per family of `engine_families.SGLANG` (`sglang:FAMILY.glm45`).
FAMILY = factories(_SGLang, SGLANG, engine="sglang", version=VERSION, module=__name__)
#: The names the first two variants had.
DeepSeekR1 = FAMILY.deepseek_r1
Qwen3 = FAMILY.qwen3
