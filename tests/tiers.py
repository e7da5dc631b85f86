"""Which tier runs the tests of an adapter whose library is slow to import.

The default tier stays within a minute on two cores; importing vLLM, SGLang or transformers
(torch under each), LiteLLM, LangChain, pydantic-ai, the OpenAI Agents SDK, LlamaIndex or AutoGen
takes from 2 to 8 s apiece, most of that minute together, and LangChain.js takes Node 1.5 s
to load. Their adapters' tests run in the slow tier, which judges every adapter over the
whole corpus as well; the default tier keeps the adapters whose libraries load in a fraction
of a second (aider, hermes-agent, llama.cpp's program, the Vercel AI SDK).
`.ci/every_module_runs.py` reads this list: these modules are the ones the default tier may
leave unrun.

No import of the package here: that script loads this file by its path.
"""

from __future__ import annotations

#: The adapter modules that import such a library (at the top of the module).
SLOW_TO_IMPORT = frozenset(
    f"conformance.adapters.{name}"
    for name in (
        "autogen",
        "langchain",
        "litellm",
        "litellm_http",
        "llama_index",
        "openai_agents",
        "pydantic_ai",
        "sglang",
        "transformers",
        "vllm",
    )
)


#: The Node adapter scripts that load such a library.
SLOW_TO_LOAD_SCRIPTS = ("/node/langchain.mjs",)


def slow_to_import(spec: str) -> bool:
    """Whether an implementation spec loads one of those modules (`python:MODULE:OBJECT`) or
    scripts (`cmd:node SCRIPT ...`)."""
    kind, _, rest = spec.partition(":")
    if kind == "cmd":
        return any(script in rest for script in SLOW_TO_LOAD_SCRIPTS)
    return kind == "python" and rest.partition(":")[0] in SLOW_TO_IMPORT
