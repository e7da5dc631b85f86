"""Layer 3 (plug-ins): adapters for public normalizers. Each drives a real library's reasoning
splitter through the Python interface (`python:`) or the protocol (`cmd:`), so the suite can
run it like any implementation. `conformance matrix` runs every adapter whose library is
installed.

Each library is an optional extra (`pip install 'reasoning-conformance[pydantic-ai]'`); the
Node adapter needs `npm ci --prefix` this package's `node/` directory. docs/ecosystem.md lists
what each adapter drives and the results.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from . import llamacpp_program
from .adapter import NODE_DIR, Adapter
from .engine_families import VARIANTS, Variant

#: Known divergences of each adapter, `expectations/<label>.yaml` (see docs/ecosystem.md).
EXPECTATIONS_DIR = Path(__file__).parent / "expectations"


def _python(
    label: str, target: str, library: str, install: str, about: str, *, over_http: bool = False
) -> Adapter:
    module = f"conformance.adapters.{target.partition(':')[0]}"
    spec = f"python:{module}:{target.partition(':')[2]}"
    return Adapter(label, spec, library, install, about, module=module, over_http=over_http)


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


def _llamacpp(label: str, template: str, options: dict[str, object], about: str) -> Adapter:
    """llama.cpp's common_chat_parse set up from one of its chat templates, as llama-server
    sets it up; the program is built into a cache (conformance/adapters/llamacpp_build.py)."""
    binary = str(llamacpp_program.binary_path())
    words = [
        binary,
        "--template",
        str(llamacpp_program.templates_dir() / template),
        "--name",
        f"llama.cpp common_chat_parse ({template})",
        "--version",
        llamacpp_program.VERSION,
        "--options",
        json.dumps(options, separators=(",", ":")),
    ]
    return Adapter(
        label,
        "cmd:" + shlex.join(words),
        "llama.cpp (vendored by llama-cpp-python)",
        llamacpp_program.build_command(),
        about,
        language="c++",
        binary=binary,
    )


_LLAMACPP_ABOUT = (
    "common_chat_parse with the parser the {0} template selects, as llama-server runs it: the "
    "accumulated text reparsed per chunk and diffed (common_chat_msg_diff), a final parse at "
    "the end, one parse for whole messages"
)

_R1 = "the {0} reasoning parser: per chunk, flushed at the end, and whole messages at once"
_VLLM_ABOUT = (
    "the {0} reasoning parser through the OpenAI server's chat path: Parser.parse_delta per "
    "engine output (via ChatStreamProcessor.step), Parser.parse for whole messages; token IDs "
    "from a stand-in tokenizer"
)


def _engine(variant: Variant) -> Adapter:
    """The adapter of one family of vLLM or SGLang (engine_families.py)."""
    module = variant.engine.lower()
    if module == "vllm":
        about = _VLLM_ABOUT.format(variant.parser)
    else:
        about = _R1.format(f"ReasoningParser({variant.parser!r})")
    install = VLLM if module == "vllm" else SGLANG
    return _python(
        variant.label, f"{module}:FAMILY.{variant.family}", variant.engine, install, about
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
    *(_engine(variant) for variant in VARIANTS),
)


# -- LangChain (chat models driven through HTTP on 127.0.0.1) --------------------------------

_LC_ABOUT = (
    "{0} from {1}, streaming (.stream) and not (.invoke), against a live {2} server on "
    "127.0.0.1 that writes one event per chunk"
)


def _langchain_node(label: str, kind: str, about: str) -> Adapter:
    script = shlex.quote(str(NODE_DIR / "langchain.mjs"))
    return Adapter(
        label,
        f"cmd:node {script} {kind}",
        f"LangChain.js (@langchain/{kind})",
        f"npm ci --prefix {shlex.quote(str(NODE_DIR))}",
        about,
        language="typescript",
        npm_package=f"@langchain/{kind}",
        over_http=True,
    )


ADAPTERS += (
    _python(
        "langchain-openai",
        "langchain:OpenAI",
        "LangChain (langchain-openai)",
        _extra("langchain"),
        _LC_ABOUT.format("ChatOpenAI", "langchain-openai", "OpenAI-compatible SSE"),
        over_http=True,
    ),
    _python(
        "langchain-deepseek",
        "langchain:DeepSeek",
        "LangChain (langchain-deepseek)",
        _extra("langchain"),
        _LC_ABOUT.format("ChatDeepSeek", "langchain-deepseek", "OpenAI-compatible SSE"),
        over_http=True,
    ),
    _python(
        "langchain-ollama",
        "langchain:Ollama",
        "LangChain (langchain-ollama)",
        _extra("langchain"),
        _LC_ABOUT.format("ChatOllama (reasoning unset)", "langchain-ollama", "Ollama /api/chat"),
        over_http=True,
    ),
    _python(
        "langchain-ollama-reasoning",
        "langchain:OllamaReasoning",
        "LangChain (langchain-ollama)",
        _extra("langchain"),
        _LC_ABOUT.format("ChatOllama(reasoning=True)", "langchain-ollama", "Ollama /api/chat"),
        over_http=True,
    ),
    _langchain_node(
        "langchain-js-openai",
        "openai",
        _LC_ABOUT.format("ChatOpenAI", "@langchain/openai", "OpenAI-compatible SSE"),
    ),
    _langchain_node(
        "langchain-js-deepseek",
        "deepseek",
        _LC_ABOUT.format("ChatDeepSeek", "@langchain/deepseek", "OpenAI-compatible SSE"),
    ),
    _langchain_node(
        "langchain-js-ollama",
        "ollama",
        _LC_ABOUT.format("ChatOllama", "@langchain/ollama", "Ollama /api/chat"),
    ),
)

ADAPTERS += (
    # llama.cpp: one adapter per parser its chat templates select (models/templates/).
    _llamacpp(
        "llamacpp-deepseek-r1",
        "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja",
        {"profile": "deepseek_r1", "native_with_tags": "merge"},
        _LLAMACPP_ABOUT.format("DeepSeek-R1 (Distill-Qwen-32B)"),
    ),
    _llamacpp(
        "llamacpp-qwen3",
        "Qwen-Qwen3-0.6B.jinja",
        {"profile": "qwen3", "native_with_tags": "merge"},
        _LLAMACPP_ABOUT.format("Qwen3-0.6B"),
    ),
    _llamacpp(
        "llamacpp-glm4.6",
        "GLM-4.6.jinja",
        {"profile": "glm45", "native_with_tags": "merge"},
        _LLAMACPP_ABOUT.format("GLM-4.6"),
    ),
    _llamacpp(
        "llamacpp-magistral",
        "mistralai-Ministral-3-14B-Reasoning-2512.jinja",
        {"profile": "mistral", "native_with_tags": "merge"},
        _LLAMACPP_ABOUT.format("Ministral-3-14B-Reasoning (Magistral's [THINK])"),
    ),
)

ADAPTERS += (
    # -- agent frameworks and small splitters -------------------------------------------------
    _python(
        "openai-agents",
        "openai_agents:ChatCompletions",
        "OpenAI Agents SDK",
        _extra("openai-agents"),
        "OpenAIChatCompletionsModel against a loopback server: stream_response's events "
        "(ChatCmplStreamHandler) per server-sent event, get_response for whole messages",
        over_http=True,
    ),
    _python(
        "llama-index-ollama",
        "llama_index:OllamaChat",
        "LlamaIndex",
        _extra("llama-index"),
        "llama_index.llms.ollama.Ollama against a loopback server: astream_chat's deltas and "
        "thinking_delta per JSON line, achat's ThinkingBlock and TextBlock for whole messages",
        over_http=True,
    ),
    _python(
        "aider",
        "aider:ReasoningTag",
        "aider",
        "pip install --no-deps aider-chat",
        "remove_reasoning_content(reply, 'think'), the answer aider keeps once a reply is "
        "complete (model setting reasoning_tag: think)",
    ),
    _python(
        "hermes-agent",
        "hermes:ThinkScrubber",
        "hermes-agent",
        "pip install --no-deps hermes-agent",
        "StreamingThinkScrubber, which every streamed content delta goes through (feed, then "
        "flush at the end); native reasoning passed on as hermes-agent passes it",
    ),
)

ADAPTERS += (
    # -- AutoGen (adapters/autogen.py) --
    _python(
        "autogen-r1",
        "autogen:R1",
        "AutoGen (autogen-ext)",
        _extra("autogen"),
        "OpenAIChatCompletionClient, R1 family, against a loopback server: create_stream's final "
        "CreateResult (content, thought), create for whole messages (parse_r1_content)",
        over_http=True,
    ),
)


def adapter(label: str) -> Adapter:
    for candidate in ADAPTERS:
        if candidate.label == label:
            return candidate
    labels = ", ".join(a.label for a in ADAPTERS)
    raise KeyError(f"no adapter is labelled {label!r} (the adapters: {labels})")


__all__ = ["ADAPTERS", "EXPECTATIONS_DIR", "adapter"]
