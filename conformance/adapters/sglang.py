"""SGLang's reasoning parser, `deepseek-r1` and `qwen3` detectors.

    conformance run --impl sglang-deepseek-r1=python:conformance.adapters.sglang:DeepSeekR1
    conformance run --impl sglang-qwen3=python:conformance.adapters.sglang:Qwen3

`sglang.srt.parser.reasoning_parser.ReasoningParser(model_type, stream_reasoning=True)`:
`parse_stream_chunk` per chunk, `parse_stream_end` at the end of the stream, and
`parse_non_stream` for the whole form, exactly as SGLang's OpenAI-compatible server calls it.

The parser needs no server dependency, but `import sglang` runs `sglang/__init__.py`, which
imports torch, triton and the runtime. This module therefore registers the installed
`sglang` package without running that file and imports the parser module from it directly;
what the parser module itself imports comes from the `sglang` extra (install SGLang itself
with `pip install --no-deps sglang`, see docs/ecosystem.md).

SGLang parses model output on the server, where no native reasoning field exists yet: the
adapter passes a chunk's native reasoning straight to the thinking channel, so tag bodies are
always kept beside it (merge). `deepseek-r1` starts inside reasoning (the chat template
opened the block in the prompt); `qwen3` starts outside.
"""

from __future__ import annotations

import importlib.util
import sys
import types

from ..interface import Chunk, Delta, implementation
from ._common import delta, installed_version, native


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
from sglang.srt.parser.reasoning_parser import ReasoningParser  # noqa: E402

VERSION = installed_version("sglang")


class _SGLang:
    model_type: str

    def __init__(self) -> None:
        self._parser = ReasoningParser(model_type=self.model_type, stream_reasoning=True)

    def feed(self, chunk: Chunk) -> Delta:
        reasoning, normal = self._parser.parse_stream_chunk(chunk.get("content") or "")
        return delta(normal, native(chunk) + (reasoning or ""))

    def finish(self) -> Delta:
        reasoning, normal = self._parser.parse_stream_end()
        return delta(normal, reasoning)

    def whole(self, content: str | None, reasoning: str | None) -> Delta:
        found, normal = self._parser.parse_non_stream(content or "")
        return delta(normal, (reasoning or "") + (found or ""))


@implementation(
    name="sglang (deepseek-r1)",
    version=VERSION,
    options={"delimiters": "think_only", "start_in_reasoning": True, "native_with_tags": "merge"},
)
class DeepSeekR1(_SGLang):
    model_type = "deepseek-r1"


@implementation(
    name="sglang (qwen3)",
    version=VERSION,
    options={"delimiters": "think_only", "native_with_tags": "merge"},
)
class Qwen3(_SGLang):
    model_type = "qwen3"
