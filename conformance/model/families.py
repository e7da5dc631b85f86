"""Model-family profiles (SPEC.md 5.9): the reasoning formats the serving engines ship,
each a set of option values named as the engines name their reasoning parsers, with where
the engines define it.

A profile is data only: `{"profile": NAME}` in any options mapping stands for its values
(`conformance.model.options`), and options written next to it override them. Where the
engines differ from SPEC.md's defaults, the profile records the engine's choice as an option
value (`sections: one`, `start_in_reasoning`), never as an exception in the code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Source:
    """Where an engine defines a family's reasoning parser."""

    engine: str
    parser: str
    file: str

    def to_json(self) -> dict[str, str]:
        return {"engine": self.engine, "parser": self.parser, "file": self.file}


@dataclass(frozen=True, slots=True)
class Family:
    """One model family's reasoning format: its option values and their provenance."""

    name: str
    summary: str
    options: dict[str, Any]
    sources: tuple[Source, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "summary": self.summary,
            "options": self.options,
            "sources": [source.to_json() for source in self.sources],
        }


_SGLANG = "python/sglang/srt/parser/reasoning_parser.py"


def _sglang(detector: str) -> Source:
    return Source("SGLang", detector, _SGLANG)


def _vllm(parser: str, module: str) -> Source:
    return Source("vLLM", parser, f"vllm/reasoning/{module}.py")


def _dynamo(family: str) -> Source:
    return Source("Dynamo", family, f"tests/parity/reasoning/fixtures/{family}/")


#: Options most special-token families share: `<think>` alone, one section per message,
#: delimiters that are single tokens (a chunk boundary never falls inside one).
_TOKENS: dict[str, Any] = {
    "delimiters": "think_only",
    "sections": "one",
    "atomic_delimiters": True,
}

FAMILIES: dict[str, Family] = {
    family.name: family
    for family in (
        Family(
            "deepseek_r1",
            "DeepSeek-R1: the template opens the block, output starts in reasoning",
            {**_TOKENS, "start_in_reasoning": True},
            (
                _sglang("DeepSeekR1Detector"),
                _vllm("deepseek_r1", "deepseek_r1_reasoning_parser"),
                _dynamo("deepseek_r1"),
            ),
        ),
        Family(
            "deepseek_v3",
            "DeepSeek-V3.1/3.2 with thinking on for the request (off: the default profile)",
            {
                **_TOKENS,
                "start_in_reasoning": True,
                "tool_markers": ["<\uff5ctool\u2581calls\u2581begin\uff5c>"],
            },
            (
                _sglang("_DeepSeekV3Detector"),
                _vllm("deepseek_v3", "deepseek_v3_reasoning_parser"),
                _dynamo("deepseek_v3"),
            ),
        ),
        Family(
            "deepseek_v4",
            "DeepSeek-V4: a DSML tool call ends reasoning",
            {**_TOKENS, "tool_markers": ["<\uff5cDSML\uff5c"]},
            (
                _sglang("DeepSeekV4Detector"),
                _vllm("deepseek_v4", "deepseek_v4_engine_reasoning_parser"),
                _dynamo("deepseek_v4"),
            ),
        ),
        Family(
            "qwen3",
            "Qwen3 (enable_thinking): `<tool_call>` before `</think>` ends reasoning",
            {**_TOKENS, "tool_markers": ["<tool_call>"]},
            (
                _sglang("Qwen3Detector"),
                _vllm("qwen3", "qwen3_engine_reasoning_parser"),
                _dynamo("qwen3"),
            ),
        ),
        Family(
            "qwen3_forced",
            "Qwen3 thinking models (2507): the template opens the block",
            {**_TOKENS, "start_in_reasoning": True, "tool_markers": ["<tool_call>"]},
            (
                Source("SGLang", "Qwen3Detector(force_reasoning=True)", _SGLANG),
                _vllm("qwen3", "qwen3_engine_reasoning_parser"),
            ),
        ),
        Family(
            "glm45",
            "GLM-4.5/4.6/4.7: `<tool_call>` ends reasoning",
            {**_TOKENS, "tool_markers": ["<tool_call>"]},
            (_sglang("Glm45Detector"), _vllm("glm45", "glm47_moe_reasoning_parser")),
        ),
        Family(
            "kimi",
            "Kimi-VL thinking: `◁think▷` and `◁/think▷`",
            {"delimiters": "kimi", "sections": "one"},
            (_sglang("KimiDetector"), _dynamo("kimi")),
        ),
        Family(
            "kimi_k2",
            "Kimi K2 thinking: `<|tool_calls_section_begin|>` ends reasoning",
            {**_TOKENS, "tool_markers": ["<|tool_calls_section_begin|>"]},
            (
                _sglang("KimiK2Detector"),
                _vllm("kimi_k2", "kimi_k2_reasoning_parser"),
                _dynamo("kimi_k25"),
            ),
        ),
        Family(
            "minimax",
            "MiniMax-M2: the parser appends the open tag, output starts in reasoning",
            {**_TOKENS, "start_in_reasoning": True},
            (
                _sglang("MiniMaxAppendThinkDetector"),
                _vllm("minimax_m2_append_think", "minimax_m2_reasoning_parser"),
                _dynamo("minimax_append_think"),
            ),
        ),
        Family(
            "minimax_m3",
            "MiniMax-M3: `<mm:think>` and `</mm:think>`",
            {**_TOKENS, "delimiters": [{"open": "<mm:think>", "close": "</mm:think>"}]},
            (_sglang("MiniMaxM3Detector"), _vllm("minimax_m3", "minimax_m3_reasoning_parser")),
        ),
        Family(
            "mistral",
            "Magistral: `[THINK]` and `[/THINK]`; a `[TOOL_CALLS]` inside reasoning is text",
            {**_TOKENS, "delimiters": "bracket"},
            (
                _sglang("MistralDetector"),
                _vllm("mistral", "mistral_reasoning_parser"),
                _dynamo("mistral"),
            ),
        ),
        Family(
            "granite",
            "Granite 3.x: plain-text phrases, not special tokens",
            {
                "delimiters": [
                    {"open": "Here is my thought process:", "close": "Here is my response:"},
                    {"open": "Here's my thought process:", "close": "Here's my response:"},
                ],
                "sections": "one",
            },
            (_vllm("granite", "granite_reasoning_parser"), _dynamo("granite")),
        ),
        Family(
            "granite_thinking",
            "Granite 4.2 thinking: `<tool_call>` ends reasoning",
            {**_TOKENS, "tool_markers": ["<tool_call>"]},
            (
                _sglang("GraniteThinkingDetector"),
                _vllm("granite_thinking_parser", "granite_thinking_engine_reasoning_parser"),
            ),
        ),
        Family(
            "seed_oss",
            "Seed-OSS: `<seed:think>` and `</seed:think>`",
            {**_TOKENS, "delimiters": [{"open": "<seed:think>", "close": "</seed:think>"}]},
            (_vllm("seed_oss", "seed_oss_engine_reasoning_parser"),),
        ),
        Family(
            "nemotron",
            "Nemotron 3: `<tool_call>` ends reasoning",
            {**_TOKENS, "tool_markers": ["<tool_call>"]},
            (
                _sglang("Nemotron3Detector"),
                _vllm("nemotron_v3", "nemotron_v3_engine_reasoning_parser"),
                _dynamo("nemotron_deci"),
            ),
        ),
        Family(
            "gemma4",
            "Gemma 4: `<|channel>thought` and a newline open, `<channel|>` closes",
            {**_TOKENS, "delimiters": [{"open": "<|channel>thought\n", "close": "<channel|>"}]},
            (
                _sglang("Gemma4Detector"),
                _vllm("gemma4", "gemma4_engine_reasoning_parser"),
                _dynamo("gemma4"),
            ),
        ),
        Family(
            "command_a",
            "Cohere Command A reasoning: `<|START_THINKING|>` and `<|END_THINKING|>`",
            {
                **_TOKENS,
                "delimiters": [{"open": "<|START_THINKING|>", "close": "<|END_THINKING|>"}],
            },
            (
                _sglang("CohereCommand4Detector"),
                _vllm("cohere_command4", "cohere_command_reasoning_parser"),
            ),
        ),
        Family(
            "hunyuan",
            "Hunyuan: `<tool_calls>` ends reasoning",
            {**_TOKENS, "tool_markers": ["<tool_calls>"]},
            (_sglang("HunyuanDetector"), _vllm("hunyuan_a13b", "hunyuan_a13b_reasoning_parser")),
        ),
        Family(
            "step3",
            "Step3: everything before `</think>` is reasoning",
            {**_TOKENS, "start_in_reasoning": True},
            (
                Source("SGLang", "DeepSeekR1Detector (step3)", _SGLANG),
                _vllm("step3", "step3_reasoning_parser"),
            ),
        ),
        Family(
            "olmo3",
            "Olmo 3: `<think>` tags are ordinary text tokens, and output starts in reasoning",
            {"delimiters": "think_only", "start_in_reasoning": True, "sections": "one"},
            (_vllm("olmo3", "olmo3_reasoning_parser"),),
        ),
        Family(
            "gpt_oss",
            "gpt-oss: harmony channels (`analysis`, `final`, `commentary`, tool calls)",
            {"framing": "harmony", "atomic_delimiters": True},
            (
                _sglang("GptOssDetector"),
                _vllm("openai_gptoss", "gptoss_reasoning_parser"),
                _dynamo("gpt_oss"),
            ),
        ),
    )
}
