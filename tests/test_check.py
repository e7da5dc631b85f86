"""`conformance check`, `dump` and `taxonomy`: the corpus checks itself."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.corpus.cases import bundled_cases_dir

from .helpers import cli

TAXONOMY = """\
entries:
  BLOCK.inline: {section: "4.1", title: "A block"}
  ORPHAN.close: {section: "6.5", title: "An orphan"}
"""

GOOD = """\
category: sample
cases:
  - id: "K7QF"
    slug: inline-block
    title: An inline block
    taxonomy: BLOCK.inline
    level: must
    chunks: ["<think>plan</thi", "nk>Answer"]
    expected: {assistant: "Answer", thinking: "plan"}
    provenance: [{kind: hand, ref: "test"}]
  - id: "M4PX"
    slug: orphan-close
    title: An orphan close
    taxonomy: ORPHAN.close
    level: must
    chunks: ["done</think>answer"]
    expected: {assistant: "doneanswer", thinking: ""}
    variants:
      - when: {start_in_reasoning: true}
        expected: {assistant: "answer", thinking: "done"}
    provenance: [{kind: hand, ref: "test"}]
"""


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    (tmp_path / "taxonomy.yaml").write_text(TAXONOMY)
    (tmp_path / "good.yaml").write_text(GOOD)
    return tmp_path


@pytest.mark.slow  # every case under every profile; .ci/run also runs `conformance check`
def test_the_bundled_corpus_is_consistent():
    result = cli("check")
    assert result.returncode == 0, result.stdout + result.stderr
    count = int(result.stderr.split()[0])
    assert count >= 200
    assert "0 problems" in result.stderr


def test_a_good_corpus_passes(corpus: Path):
    result = cli("check", "--cases", str(corpus))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 cases in 1 files: 0 problems" in result.stderr


def test_malformed_yaml_names_file_and_line_and_other_files_are_still_checked(corpus: Path):
    (corpus / "broken.yaml").write_text('category: x\ncases:\n  - id: "AAAA"\n    slug: [oops\n')
    (corpus / "wrong.yaml").write_text(
        GOOD.replace('assistant: "Answer"', 'assistant: "Nope"')
        .replace("K7QF", "K7QG")
        .replace("M4PX", "M4PY")
        .replace("slug: ", "slug: w-")
    )
    result = cli("check", "--cases", str(corpus))
    assert result.returncode == 2
    assert f"{corpus / 'broken.yaml'}:5: malformed YAML" in result.stdout
    # The good and the wrong file were still checked.
    assert f"{corpus / 'wrong.yaml'}:3: K7QG: " in result.stdout


def test_schema_violations_point_at_the_case(corpus: Path):
    bad = GOOD.replace("    level: must\n", "", 1).replace('"M4PX"', '"M4P1"')
    (corpus / "good.yaml").write_text(bad)
    result = cli("check", "--cases", str(corpus))
    assert result.returncode == 2
    assert f"{corpus / 'good.yaml'}:3: cases/0: 'level' is a required property" in result.stdout
    assert "cases/1/id: 'M4P1' does not match" in result.stdout


def test_identity_taxonomy_and_hygiene_problems(corpus: Path):
    second = GOOD.replace("slug: ", "slug: again-").replace("BLOCK.inline", "BLOCK.unknown")
    second = second.replace("title: An orphan close", "title: An orphan close\n    title: twice")
    (corpus / "second.yaml").write_text(second.replace("done</think>", "done\t</think>"))
    (corpus / "retired-ids.txt").write_text("# retired\nM4PX reused by mistake once\n")
    result = cli("check", "--cases", str(corpus))
    out = result.stdout
    assert "duplicate case ID 'K7QF', first used at" in out
    assert "case ID M4PX is retired" in out
    assert "unknown taxonomy entry 'BLOCK.unknown'" in out
    assert "duplicate key 'title'" in out
    assert "literal U+0009 (CHARACTER TABULATION): write it as the escape \\t" in out


def test_disagreement_with_the_reference_suggests_a_variant(corpus: Path):
    (corpus / "good.yaml").write_text(
        GOOD.replace(
            "    variants:\n      - when: {start_in_reasoning: true}\n"
            '        expected: {assistant: "answer", thinking: "done"}\n',
            "",
        )
        .replace('chunks: ["<think>plan</thi", "nk>Answer"]', 'chunks: ["<think>plan"]')
        .replace(
            'expected: {assistant: "Answer", thinking: "plan"}',
            'expected: {assistant: "", thinking: "plan"}',
        )
    )
    result = cli("check", "--cases", str(corpus), "--suggest")
    assert result.returncode == 1
    assert "K7QF: under options unclosed_at_end=drop the reference disagrees" in result.stdout
    assert '- when: {"unclosed_at_end": "drop"}' in result.stdout
    assert 'expected: {"assistant": "", "thinking": ""}' in result.stdout


def test_conservation_catches_invented_text(corpus: Path):
    (corpus / "good.yaml").write_text(GOOD.replace('thinking: "plan"}', 'thinking: "plan!"}'))
    result = cli("check", "--cases", str(corpus))
    assert (
        "conservation fails for the stream expectation: characters that are not in the "
        "input: '!'" in result.stdout
    )


def test_uncovered_taxonomy_entries_are_reported(corpus: Path):
    (corpus / "taxonomy.yaml").write_text(TAXONOMY + '  WS.crlf: {section: "6.6", title: "x"}\n')
    result = cli("check", "--cases", str(corpus))
    assert result.returncode == 1
    assert "taxonomy entry WS.crlf has no case" in result.stdout


def test_dump_gives_every_case_with_a_content_hash(corpus: Path):
    result = cli("dump", "--format", "json", "--cases", str(corpus))
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert [case["id"] for case in data["cases"]] == ["K7QF", "M4PX"]
    assert data["cases"][0]["chunks"][0] == {"content": "<think>plan</thi", "reasoning": None}
    assert all(case["hash"].startswith("sha256:") for case in data["cases"])
    assert data["options"]["default"]["delimiters"] == "think"
    (corpus / "good.yaml").write_text(GOOD.replace("An inline block", "An inline block!"))
    again = json.loads(cli("dump", "--cases", str(corpus)).stdout)
    assert again["cases"][0]["hash"] != data["cases"][0]["hash"]
    assert again["cases"][1]["hash"] == data["cases"][1]["hash"]


def test_spec_taxonomy_table_is_up_to_date():
    result = cli("taxonomy", "--check", "SPEC.md")
    assert result.returncode == 0, result.stderr


def test_the_bundled_corpus_is_found():
    assert (bundled_cases_dir() / "taxonomy.yaml").exists()
