"""Layer 3 (plug-ins): adapters for public normalizers. Each drives a real library's reasoning
splitter through the Python interface (`python:`) or the protocol (`cmd:`), so the suite can
run it like any implementation. `conformance matrix` runs every adapter whose library is
installed.

Each library is an optional extra (`pip install 'reasoning-conformance[pydantic-ai]'`); the
Node adapter needs `npm ci --prefix` this package's `node/` directory. docs/ecosystem.md lists
what each adapter drives and the results.
"""

from __future__ import annotations

import importlib
import shlex
import shutil
from dataclasses import dataclass
from pathlib import Path

NODE_DIR = Path(__file__).parent / "node"
#: Known divergences of each adapter, `expectations/<label>.yaml` (see docs/ecosystem.md).
EXPECTATIONS_DIR = Path(__file__).parent / "expectations"


@dataclass(frozen=True, slots=True)
class Adapter:
    """One implementation variant of a public library."""

    label: str
    #: The implementation spec `--impl` takes.
    spec: str
    #: The library, as its users know it, and the extra (or command) that installs it.
    library: str
    install: str
    #: What the adapter drives, in one sentence.
    about: str = ""
    language: str = "python"
    #: The module whose import proves the library is there (python adapters).
    module: str | None = None

    @property
    def shown_spec(self) -> str:
        return shown(self.spec)

    @property
    def shown_install(self) -> str:
        return shown(self.install)

    def unavailable(self) -> str | None:
        """Why this adapter cannot run here, or None when it can."""
        if self.module is not None:
            try:
                importlib.import_module(self.module)
            except Exception as error:  # whatever the library raises on import
                problem = f"{type(error).__name__}: {error}"
                return f"{self.library} cannot be imported ({problem}); {self.install}"
            return None
        if shutil.which("node") is None:
            return f"node is not on PATH; {self.install}"
        if not (NODE_DIR / "node_modules" / "ai" / "package.json").exists():
            return f"the npm package `ai` is not installed in {NODE_DIR}; {self.install}"
        return None


def shown(text: str) -> str:
    """Text as documentation shows it: this package's paths relative to the repository."""
    return text.replace(str(Path(__file__).parent), "conformance/adapters")


def _python(label: str, target: str, library: str, install: str, about: str) -> Adapter:
    module = f"conformance.adapters.{target.partition(':')[0]}"
    spec = f"python:{module}:{target.partition(':')[2]}"
    return Adapter(label, spec, library, install, about, module=module)


def _extra(name: str) -> str:
    return f"pip install 'reasoning-conformance[{name}]'"


#: SGLang and vLLM pin their whole serving stack (CUDA builds of torch among it); their parsers
#: need a fraction of it, which the extras list, so the libraries go in without dependencies.
SGLANG = f"{_extra('sglang')} && pip install --no-deps sglang"
VLLM = f"pip install torch==2.13.0 && {_extra('vllm')} && pip install --no-deps vllm"


def _node(label: str, about: str, *arguments: str) -> Adapter:
    script = shlex.quote(str(NODE_DIR / "vercel-ai.mjs"))
    return Adapter(
        label,
        " ".join(["cmd:node", script, *arguments]),
        "Vercel AI SDK (npm ai)",
        f"npm ci --prefix {shlex.quote(str(NODE_DIR))}",
        about,
        language="typescript",
    )


_R1 = "the {0} reasoning parser: per chunk, flushed at the end, and whole messages at once"
_VLLM_ABOUT = (
    "the {0} reasoning parser through the OpenAI server's chat path: Parser.parse_delta per "
    "engine output (via ChatStreamProcessor.step), Parser.parse for whole messages; token IDs "
    "from a stand-in tokenizer"
)
ADAPTERS: tuple[Adapter, ...] = (
    _python(
        "pydantic-ai",
        "pydantic_ai:PydanticAI",
        "pydantic-ai",
        _extra("pydantic-ai"),
        "OpenAIChatModel: chunks through OpenAIStreamedResponse (the parts manager with thinking "
        "tags), whole messages through _process_response (split_content_into_text_and_thinking)",
    ),
    _python(
        "litellm",
        "litellm:ChatCompletion",
        "LiteLLM",
        _extra("litellm"),
        "convert_to_model_response_object, the non-streaming conversion of OpenAI-compatible "
        "responses (its OpenAI-compatible streaming does not parse tags)",
    ),
    _python(
        "litellm-ollama",
        "litellm:OllamaChat",
        "LiteLLM",
        _extra("litellm"),
        "OllamaChatCompletionResponseIterator.chunk_parser, the Ollama /api/chat stream parser; "
        "whole responses through litellm.completion(model='ollama_chat/...') against a local "
        "server (OllamaChatConfig.transform_response)",
    ),
    _python(
        "sglang-deepseek-r1",
        "sglang:DeepSeekR1",
        "SGLang",
        SGLANG,
        _R1.format("ReasoningParser('deepseek-r1')"),
    ),
    _python(
        "sglang-qwen3", "sglang:Qwen3", "SGLang", SGLANG, _R1.format("ReasoningParser('qwen3')")
    ),
    _python(
        "vllm-deepseek-r1",
        "vllm:DeepSeekR1",
        "vLLM",
        VLLM,
        _VLLM_ABOUT.format("deepseek_r1"),
    ),
    _python(
        "vllm-qwen3",
        "vllm:Qwen3",
        "vLLM",
        VLLM,
        _VLLM_ABOUT.format("qwen3 (parser engine)"),
    ),
    _python(
        "transformers-qwen3",
        "transformers:Qwen3",
        "transformers",
        _extra("transformers"),
        "ResponseParser / parse_response with the Qwen3 response template of transformers serve",
    ),
    _python(
        "transformers-qwen3.5",
        "transformers:Qwen35",
        "transformers",
        _extra("transformers"),
        "the same with the Qwen3.5 template, whose prompt opens the think block (thinking mode)",
    ),
    # -- LiteLLM: the Ollama /api/generate path -------------------------------------------
    # litellm_http.OpenAIStream (the OpenAI-compatible streaming handler) and ResponsesBridge
    # (litellm.responses over chat completions) drive litellm.completion / litellm.responses
    # over HTTP on 127.0.0.1 and are checked in tests/test_loopback.py; not registered yet: a
    # request and a thread per stream put a corpus run past 30 minutes on a loaded 2-core
    # machine, and no lock could be written.
    _python(
        "litellm-ollama-generate",
        "litellm:OllamaGenerate",
        "LiteLLM",
        _extra("litellm"),
        "OllamaTextCompletionResponseIterator.chunk_parser, the Ollama /api/generate stream "
        "parser, per line in process; whole responses through litellm.completion(model="
        "'ollama/...') against a local server (OllamaConfig.transform_response)",
    ),
    # -- end of the LiteLLM block ----------------------------------------------------------
    _node(
        "vercel-ai",
        "extractReasoningMiddleware({tagName: 'think'}) around a model: doStream and doGenerate",
    ),
    _node(
        "vercel-ai-start-with-reasoning",
        "the same with startWithReasoning: true",
        "--start-with-reasoning",
    ),
)


def adapter(label: str) -> Adapter:
    for candidate in ADAPTERS:
        if candidate.label == label:
            return candidate
    labels = ", ".join(a.label for a in ADAPTERS)
    raise KeyError(f"no adapter is labelled {label!r} (the adapters: {labels})")


__all__ = ["ADAPTERS", "EXPECTATIONS_DIR", "NODE_DIR", "Adapter", "adapter", "shown"]
