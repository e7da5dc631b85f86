"""Cases of behaviour other engines and clients test or were reported on: the taxonomy entries
marked `source: required` (cases/taxonomy.yaml), each case naming its upstream `source:`, and
the family-profile variants (`when: {profile: NAME}`) they are written with."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from conformance.corpus.cases import bundled_cases_dir, load_corpus
from conformance.corpus.check import SOURCE_REQUIRED, Taxonomy, load_taxonomy

from .helpers import cli

TAXONOMY = """\
entries:
  BLOCK.inline: {section: "4.1", title: "A block"}
  TOOL.interrupt: {section: "5.7", title: "A marker ends reasoning", source: required}
"""

SOURCE = "vllm-project/vllm tests/reasoning/test_transition_reasoning_parsers.py"

UNSOURCED = """\
category: sample
cases:
  - id: "K7QF"
    slug: inline-block
    title: An inline block
    taxonomy: BLOCK.inline
    level: must
    chunks: ["<think>plan</think>Answer"]
    expected: {assistant: "Answer", thinking: "plan"}
    provenance: [{kind: hand, ref: "test"}]
  - id: "M4PX"
    slug: qwen3-call-ends-reasoning
    title: A tool call ends the reasoning
    taxonomy: TOOL.interrupt
    level: must
    chunks: ["<think>a<tool_call>{}</tool_call></think>b"]
    expected: {assistant: "b", thinking: "a<tool_call>{}</tool_call>"}
    variants:
      - when: {profile: qwen3}
        expected: {assistant: "<tool_call>{}</tool_call></think>b", thinking: "a"}
    provenance: [{kind: peer, ref: "vllm-project/vllm"}]
"""
CASES = UNSOURCED + f'    source: "{SOURCE}"\n'


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    (tmp_path / "taxonomy.yaml").write_text(TAXONOMY)
    (tmp_path / "cases.yaml").write_text(CASES)
    return tmp_path


def test_a_sourced_case_of_a_marked_entry_passes(corpus: Path):
    result = cli("check", "--cases", str(corpus))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 cases in 1 files: 0 problems" in result.stderr


def test_a_case_of_a_marked_entry_without_source_is_rejected_with_file_and_line(corpus: Path):
    (corpus / "cases.yaml").write_text(UNSOURCED)
    result = cli("check", "--cases", str(corpus))
    assert result.returncode == 1
    # The case begins on line 11 of the file; the unmarked entry's case needs no source.
    assert (
        f"{corpus / 'cases.yaml'}:11: case M4PX (qwen3-call-ends-reasoning) has no `source:`; "
        f"its taxonomy entry TOOL.interrupt is marked `source: required` in "
        f"{corpus / 'taxonomy.yaml'}" in result.stdout
    )
    assert "K7QF" not in result.stdout


def test_dump_carries_the_source(corpus: Path):
    data = json.loads(cli("dump", "--cases", str(corpus)).stdout)
    sources = {case["id"]: case.get("source") for case in data["cases"]}
    assert sources == {
        "K7QF": None,
        "M4PX": SOURCE,
    }


def test_a_profile_variant_is_proven_against_the_reference(corpus: Path):
    # A family's atomic delimiters change the chunkings fed, not what the input means: the
    # variant is proven (and found wrong) under the profile's other values.
    (corpus / "cases.yaml").write_text(
        CASES.replace('{assistant: "<tool_call>{}</tool_call></think>b"', '{assistant: "b"')
    )
    result = cli("check", "--cases", str(corpus))
    assert result.returncode == 1
    assert "M4PX: under options" in result.stdout
    assert "disagrees with the variant when {'profile': 'qwen3'} expectation" in result.stdout


def test_every_marked_entry_has_three_sourced_cases():
    taxonomy = load_taxonomy(bundled_cases_dir())
    assert isinstance(taxonomy, Taxonomy)
    marked = {
        entry for entry, info in taxonomy.entries.items() if info.get("source") == SOURCE_REQUIRED
    }
    assert {"HARMONY.channels", "TOOL.interrupt", "GRAMMAR.families"} <= marked
    cases = [case for case in load_corpus([bundled_cases_dir()]).cases if case.taxonomy in marked]
    counts = Counter(case.taxonomy for case in cases)
    assert {entry: counts[entry] for entry in marked if counts[entry] < 3} == {}
    assert [case.id for case in cases if not case.source] == []
