"""Cassette-backed cases: loaded into chunks like any other case, checked and run like them,
with a missing or undecodable cassette reported at the case's line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from conformance.cassettes import (
    bundled_cassettes_dir,
    decode_cassette,
    iter_cassette_files,
    write_cassette,
)
from conformance.cassettes._secrets import scan
from conformance.cli.main import main
from conformance.corpus.cases import bundled_cases_dir, load_file
from conformance.engine.runner import run_implementation
from conformance.model.cases import PENDING_REVIEW
from conformance.model.results import Verdict
from conformance.transport.impls import connect
from conformance.transport.spec import parse_impl

from .helpers import bundled_corpus

CORPUS = bundled_corpus()
CASSETTE_CASES = [case for case in CORPUS.cases if case.cassette is not None]
TAXONOMY = (bundled_cases_dir() / "taxonomy.yaml").read_text()
CHAT = "https://api.example.com/v1/chat/completions"


def corpus_dir(tmp_path: Path, cases: str) -> Path:
    """A corpus directory with its own cassettes directory beside it."""
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "taxonomy.yaml").write_text(TAXONOMY)
    (tmp_path / "cases" / "mine.yaml").write_text(cases)
    (tmp_path / "cassettes").mkdir()
    return tmp_path / "cases"


def stream(tmp_path: Path, name: str, *contents: str) -> Path:
    events = "".join(
        f'data: {{"choices": [{{"index": 0, "delta": {{"content": "{c}"}}}}]}}\n\n'
        for c in contents
    )
    return write_cassette(
        tmp_path / "cassettes" / name,
        [{"uri": CHAT, "body": events + "data: [DONE]\n\n", "content_type": "text/event-stream"}],
        {"kind": "written", "document": "a test"},
    )


CASE = """\
category: mine
cases:
  - id: "3ZZZ"
    slug: from-a-cassette
    title: A case whose input is a cassette
    taxonomy: SPLIT.open
    level: must
    cassette: {cassette}
    expected: {{assistant: "x", thinking: "y"}}
    provenance:
      - {{kind: cassette, ref: "cassettes/{cassette}"}}
"""


def test_the_corpus_has_cassette_cases_for_every_family_and_category():
    assert len(CASSETTE_CASES) >= 30
    assert all(case.category == "cassettes" for case in CASSETTE_CASES)
    assert all(case.id[0] in "23456789" for case in CASSETTE_CASES)
    assert all(any(p.kind == "cassette" for p in case.provenance) for case in CASSETTE_CASES)
    families = {
        decode_cassette(case.cassette.path, case.cassette.interaction).family
        for case in CASSETTE_CASES
    }
    assert families == {
        "openai-chat",
        "anthropic",
        "openai-responses",
        "gemini",
        "ollama",
        "cohere",
        "bedrock",
    }
    entries = {case.taxonomy for case in CASSETTE_CASES}
    # Tags with and without native reasoning, orphan closes, glued and split tags, empty
    # blocks, escaped tags (BLOCK.inline from \u003cthink\u003e), partial tags at the end.
    assert {
        "NATIVE.only",
        "NATIVE.with-tags",
        "NATIVE.before-tags",
        "BLOCK.inline",
        "ORPHAN.close",
        "SPLIT.open",
        "SPLIT.close",
        "SPLIT.many-pieces",
        "BLOCK.empty",
        "BLOCK.unclosed",
        "FLUSH.partial-open",
        "TEXT.generics",
    } <= entries
    used = {case.cassette.path.resolve() for case in CASSETTE_CASES}
    assert used == {path.resolve() for path in iter_cassette_files(bundled_cassettes_dir())}


def test_cassette_cases_load_the_decoded_chunks():
    for case in CASSETTE_CASES:
        assert case.cassette is not None
        assert case.chunks == decode_cassette(case.cassette.path, case.cassette.interaction).chunks
    escaped = next(case for case in CASSETTE_CASES if case.id == "5FCC")
    assert "<think>" in (escaped.content or "")


@pytest.mark.slow
def test_the_reference_passes_every_cassette_case_in_every_check():
    result = run_implementation(connect(parse_impl("reference")), CASSETTE_CASES)
    verdicts = {r.verdict for r in result.results}
    assert verdicts <= {Verdict.PASS, Verdict.SKIP}
    assert len(result.results) == 4 * len(CASSETTE_CASES)


@pytest.mark.slow
def test_a_broken_normalizer_fails_cassette_cases():
    result = run_implementation(
        connect(parse_impl("python:tests.fakes.broken_impls:NoCarry")), CASSETTE_CASES
    )
    failed = {r.case for r in result.results if r.verdict == Verdict.FAIL and r.check == "stream"}
    # Tags split across SSE events leak through a per-chunk filter.
    assert {"95ZV", "7FXJ", "8TFH", "74NV"} <= failed


def test_no_bundled_cassette_holds_anything_like_a_credential():
    for path in iter_cassette_files(bundled_cassettes_dir()):
        assert scan(path.read_text("utf-8")) == [], path
        text = path.read_text("utf-8").lower()
        assert "authorization:" not in text and "x-api-key:" not in text, path


@pytest.mark.slow
def test_a_case_with_a_cassette_loads_and_is_checked(tmp_path: Path):
    directory = corpus_dir(tmp_path, CASE.format(cassette="p/split.yaml"))
    stream(tmp_path, "p/split.yaml", "<th", "ink>y</think>", "x")
    cases, errors = load_file(directory / "mine.yaml")
    assert errors == []
    assert [c.content for c in cases[0].chunks] == ["<th", "ink>y</think>", "x"]
    assert cases[0].cassette is not None and cases[0].cassette.name == "p/split.yaml"
    result = CliRunner().invoke(main, ["check", "--cases", str(directory)])
    assert "mine.yaml" not in result.stdout  # no problem in the case file itself


def test_a_missing_or_undecodable_cassette_is_a_case_file_error(tmp_path: Path):
    directory = corpus_dir(tmp_path, CASE.format(cassette="p/missing.yaml"))
    _, errors = load_file(directory / "mine.yaml")
    assert [e.line for e in errors] == [8]
    assert "3ZZZ: " in errors[0].message and "does not exist" in errors[0].message
    result = CliRunner().invoke(main, ["check", "--cases", str(directory)])
    assert result.exit_code == 2
    assert f"{directory / 'mine.yaml'}:8: 3ZZZ: " in result.stdout
    (directory / "mine.yaml").write_text(CASE.format(cassette="p/cut.yaml"))
    path = stream(tmp_path, "p/cut.yaml", "a")
    path.write_text(path.read_text().replace("data: [DONE]", "data: {"))
    _, errors = load_file(directory / "mine.yaml")
    assert "interaction 0: response body line 3 (byte " in errors[0].message


def test_chunks_and_cassette_together_are_rejected(tmp_path: Path):
    text = CASE.format(cassette="p/x.yaml").replace(
        "    level: must\n", '    level: must\n    chunks: ["a"]\n'
    )
    directory = corpus_dir(tmp_path, text)
    cases, errors = load_file(directory / "mine.yaml")
    assert cases == []
    assert "exactly one of `chunks` or `cassette`" in errors[0].message


def test_a_pending_case_is_skipped_with_the_reason(tmp_path: Path):
    text = CASE.format(cassette="p/split.yaml").replace(
        "    level: must\n", "    level: must\n    pending: true\n"
    )
    directory = corpus_dir(tmp_path, text)
    stream(tmp_path, "p/split.yaml", "<think>y</think>x")
    command = ["run", "--cases", str(directory / "mine.yaml"), "--report-dir", str(tmp_path / "r")]
    # Only a pending case: nothing was judged, which is no green run unless asked for.
    result = CliRunner().invoke(main, command)
    assert result.exit_code == 1 and "judged nothing" in result.output, result.output
    result = CliRunner().invoke(main, [*command, "--allow-unjudged"])
    assert result.exit_code == 0, result.output
    report = (tmp_path / "r" / "results.json").read_text()
    results = json.loads(report)["implementations"][0]["results"]
    case_results = [r for r in results if r["check"] != "growth"]
    assert [r["verdict"] for r in case_results] == ["SKIP"] * 4
    assert PENDING_REVIEW.split(":")[0] in report


@pytest.mark.slow
def test_a_capture_anywhere_is_approved_into_a_cases_directory_of_ones_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """From any directory, as after a plain install: the capture is copied beside the
    cases, the pending case names the copy, and accepting it by the original path works."""
    monkeypatch.chdir(tmp_path)
    capture = tmp_path / "downloads" / "mine.yaml"
    capture.parent.mkdir()
    shutil.copy(bundled_cassettes_dir() / "deepseek" / "reasoner-stream.yaml", capture)
    (tmp_path / "my-cases").mkdir()
    runner = CliRunner()
    approved = runner.invoke(main, ["approve", str(capture), "--cases", "my-cases"])
    assert approved.exit_code == 0, approved.output
    copy = tmp_path / "cassettes" / "captures" / "mine.yaml"
    assert copy.read_bytes() == capture.read_bytes()
    (pending,) = (tmp_path / "my-cases" / "pending").glob("*.yaml")
    assert "captures/mine.yaml" in pending.read_text("utf-8")
    ran = runner.invoke(
        main,
        ["run", "--cases", "my-cases", "--report-dir", "r", "--allow-unjudged", "--no-growth"],
    )
    assert ran.exit_code == 0, ran.output
    accepted = runner.invoke(main, ["approve", str(capture), "--cases", "my-cases", "--accept"])
    assert accepted.exit_code == 0, accepted.output
    ran = runner.invoke(main, ["run", "--cases", "my-cases", "--report-dir", "r"])
    assert ran.exit_code == 0, ran.output


def test_served_cassettes_find_their_cases_wherever_the_cassettes_lie(tmp_path: Path) -> None:
    """serve maps by the name cases give, so a copy of the bundled cassettes (a checkout
    next to an installed package) is mapped to the bundled cases too."""
    from conformance.replay.catalog import load_served

    copy = tmp_path / "cassettes"
    shutil.copytree(bundled_cassettes_dir() / "deepseek", copy / "deepseek")
    served, problems = load_served(copy, CORPUS.cases)
    assert not problems
    by_name = {entry.name: entry.cases for entry in served}
    assert by_name["deepseek/reasoner-stream"], by_name
