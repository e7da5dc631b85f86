"""The reference under the model-family options (SPEC.md 5.7-5.11): harmony messages, tool
markers, one section per message, what conservation keeps under each framing, the options'
parsing, and the bundled corpus run under every family's profile."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conformance.model.conservation import kept_text
from conformance.model.families import FAMILIES
from conformance.model.options import Options, OptionsError, expanded
from conformance.reference import join, normalize_stream, normalize_whole

from .helpers import cli

GPT_OSS = {"profile": "gpt_oss"}
QWEN3 = {"profile": "qwen3"}
TOOL_CALL = "<|start|>assistant<|channel|>commentary to=functions.f <|constrain|>json<|message|>{}"


def channels(assistant: str, thinking: str = "") -> dict[str, str]:
    return {"assistant": assistant, "thinking": thinking}


def assert_every_chunking_gives(content: str, options: dict[str, Any], expected: Any) -> None:
    """The whole message, one chunk per character and every cut into two chunks (tokens and
    delimiters split at every point) give `expected`."""
    assert dict(normalize_whole(content, None, options)) == expected
    one_each = [{"content": char, "reasoning": None} for char in content]
    assert join(normalize_stream(one_each, options)) == expected
    for cut in range(1, len(content)):
        halves = [{"content": content[:cut]}, {"content": content[cut:]}]
        assert join(normalize_stream(halves, options)) == expected, cut


# --- harmony (SPEC.md 5.8) ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        pytest.param(
            "<|channel|>analysis<|message|>Hm.<|end|>", channels("", "Hm."), id="analysis"
        ),
        pytest.param(
            "<|start|>assistant<|channel|>final<|message|>Hi<|return|>", channels("Hi"), id="final"
        ),
        pytest.param(
            "<|channel|>commentary<|message|>Note<|end|>", channels("Note"), id="commentary"
        ),
        # A recipient makes a tool call: the whole message reaches the answer, for the tool
        # parser, wherever the recipient stands in the header.
        pytest.param(TOOL_CALL + "<|call|>", channels(TOOL_CALL + "<|call|>"), id="tool-call"),
        pytest.param(
            "<|start|>assistant to=functions.f<|channel|>commentary json<|message|>{}<|call|>",
            channels(
                "<|start|>assistant to=functions.f<|channel|>commentary json<|message|>{}<|call|>"
            ),
            id="recipient-before-channel",
        ),
        pytest.param(
            "Hi <|channel|>analysis<|message|>x<|end|> there",
            channels("Hi  there", "x"),
            id="text-outside-messages",
        ),
        pytest.param("Hi<|start|>assistant<|channel|>analysis", channels("Hi"), id="unfinished"),
        pytest.param(
            "<|channel|>analysis<|message|>x<|channel|>final<|message|>y",
            channels("y", "x"),
            id="header-inside-a-body",
        ),
        pytest.param("a<|chance", channels("a<|chance"), id="near-miss"),
        pytest.param("Hi<|end|><|return|>", channels("Hi"), id="stray-end-tokens"),
        pytest.param(
            "<|channel|>final<|message|>a<|message|>b<|constrain|>c",
            channels("abc"),
            id="tokens-in-a-body",
        ),
        pytest.param("<|channel|>analysis<|message|>x", channels("", "x"), id="unclosed"),
    ],
)
def test_harmony_messages_are_routed_by_their_headers(
    content: str, expected: dict[str, str]
) -> None:
    assert_every_chunking_gives(content, GPT_OSS, expected)


def test_a_near_miss_split_before_its_last_letters_is_released_as_text() -> None:
    chunks = [{"content": "a<|chan"}, {"content": "ce"}]
    deltas = normalize_stream(chunks, GPT_OSS)
    assert deltas[0]["assistant"] == "a"  # `<|chan` may still become `<|channel|>`
    assert deltas[1]["assistant"] == "<|chance"


# --- tool markers (SPEC.md 5.7) and one section (5.10) --------------------------------------


@pytest.mark.parametrize(
    ("options", "content", "expected"),
    [
        pytest.param(QWEN3, "<think>a<tool_call>{}", channels("<tool_call>{}", "a"), id="inside"),
        pytest.param(QWEN3, "Hi <tool_call>{}", channels("Hi <tool_call>{}"), id="outside"),
        # One section: after the block, a marker and a second block are text.
        pytest.param(
            QWEN3,
            "<think>a</think>b<think>c<tool_call>x",
            channels("b<think>c<tool_call>x", "a"),
            id="one-section",
        ),
        pytest.param(
            {**QWEN3, "sections": "many"},
            "<think>a</think>b<think>c<tool_call>x",
            channels("b<tool_call>x", "ac"),
            id="many-sections",
        ),
        pytest.param(
            {"profile": "qwen3_forced"},
            "plan<tool_call>{}",
            channels("<tool_call>{}", "plan"),
            id="start-in-reasoning",
        ),
        pytest.param(
            {"profile": "kimi_k2"},
            "<think>a<|tool_calls_section_begin|>x</think>",
            channels("<|tool_calls_section_begin|>x</think>", "a"),
            id="kimi-k2",
        ),
    ],
)
def test_a_tool_marker_ends_an_open_block_and_stays_text(
    options: dict[str, Any], content: str, expected: dict[str, str]
) -> None:
    assert_every_chunking_gives(content, options, expected)


@pytest.mark.parametrize(
    ("profile", "content", "expected"),
    [
        ("qwen3", "<think>a</think>b<think>c</think>d", channels("b<think>c</think>d", "a")),
        ("deepseek_r1", "a</think>b<think>c</think>", channels("b<think>c</think>", "a")),
    ],
    ids=["opened-in-the-output", "start-in-reasoning"],
)
def test_under_one_section_a_second_block_is_text(
    profile: str, content: str, expected: dict[str, str]
) -> None:
    assert_every_chunking_gives(content, {"profile": profile}, expected)


@pytest.mark.parametrize(
    ("options", "content", "kept"),
    [
        ({}, "a<think>b</think>c</think>", "abc"),
        (QWEN3, "<think>a<tool_call>b", "a<tool_call>b"),
        (QWEN3, "<think>a</think>b</think>", "ab</think>"),
        (
            GPT_OSS,
            "<|channel|>analysis<|message|>a<|end|>b" + TOOL_CALL + "<|call|><|return|>",
            "ab" + TOOL_CALL + "<|call|>",
        ),
        (GPT_OSS, "a<|start|>assistant<|channel|>analysis", "a"),
    ],
    ids=["tags", "markers", "one-section", "harmony", "harmony-unfinished-header"],
)
def test_kept_text_is_what_each_framing_counts_as_text(
    options: dict[str, Any], content: str, kept: str
) -> None:
    assert kept_text(Options.from_mapping(options), content) == kept


# --- options ------------------------------------------------------------------------------


def test_an_unknown_profile_is_refused_with_the_profiles_named() -> None:
    with pytest.raises(OptionsError) as raised:
        Options.from_mapping({"profile": "nope"})
    assert "'nope'" in str(raised.value)
    assert all(name in str(raised.value) for name in FAMILIES)


@pytest.mark.parametrize(
    "values",
    [
        {"framing": "harmony", "tool_markers": ["<tool_call>"]},
        {**GPT_OSS, "tool_markers": ["<tool_call>"]},
    ],
    ids=["framing", "profile"],
)
def test_harmony_refuses_tool_markers(values: dict[str, Any]) -> None:
    with pytest.raises(OptionsError, match="tool_markers"):
        Options.from_mapping(values)


def test_options_beside_a_profile_override_its_values() -> None:
    options = Options.from_mapping({**QWEN3, "sections": "many"})
    assert options.profile == "qwen3"
    assert (options.sections, options.tool_markers) == ("many", ("<tool_call>",))
    assert options.delimiters == "think_only"
    assert Options.from_mapping(QWEN3).sections == "one"


def test_a_profile_in_a_variants_when_stands_for_its_values() -> None:
    values = expanded({**QWEN3, "sections": "many"})
    assert values["tool_markers"] == ("<tool_call>",)
    assert (values["sections"], values["framing"]) == ("many", "tags")


@pytest.mark.parametrize("command", ["run", "fuzz"])
def test_the_commands_refuse_an_unknown_profile(command: str) -> None:
    ran = cli(command, "--impl", "reference", "--options", '{"profile": "nope"}')
    assert ran.returncode == 2, ran.stdout + ran.stderr
    assert "--options: unknown profile 'nope'" in ran.stderr and "gpt_oss" in ran.stderr


# --- the corpus under every family --------------------------------------------------------

#: The family whose run of the whole corpus stays in the default tier (the other runs take
#: 2-4 s each).
QUICK_FAMILIES = ("qwen3",)


@pytest.mark.slow
@pytest.mark.parametrize(
    "family",
    [
        name if name in QUICK_FAMILIES else pytest.param(name, marks=pytest.mark.slow)
        for name in FAMILIES
    ],
)
def test_the_reference_passes_the_corpus_under_each_family(tmp_path: Path, family: str) -> None:
    """Every check passes, and derived cases stand in for nearly every written one: at most
    a tenth of the checks are SKIP."""
    options = json.dumps({"profile": family})
    ran = cli(
        "run", "--impl", "reference", "--options", options, "--no-growth", "--report-dir", tmp_path
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    (result,) = json.loads((tmp_path / "results.json").read_text())["implementations"]
    assert result["options"]["profile"] == family
    summary = result["summary"]
    assert summary["PASS"] and not summary["FAIL"] + summary["ERROR"], summary
    assert summary["SKIP"] <= 0.1 * sum(summary.values()), summary
