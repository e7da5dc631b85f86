"""The fuzzer: its strategies, and that it finds, shrinks and writes what the corpus misses."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest
import yaml
from hypothesis import Phase, find, given, settings
from hypothesis import strategies as st

from conformance import strategies as cs
from conformance.contracts import fuzz_properties
from conformance.corpus.cases import schema
from conformance.engine.runner import run_implementation
from conformance.model.options import Options
from conformance.model.results import Verdict
from conformance.reference import join, normalize_stream
from conformance.transport.impls import connect
from conformance.transport.spec import parse_impl

from .fakes.fuzz_targets import ALL
from .helpers import bundled_corpus, cli, conformance_process

#: The default tier checks the corpus against one target; the slow tier against each.
CORPUS_TARGETS = [
    target if target == "ThreePieces" else pytest.param(target, marks=pytest.mark.slow)
    for target in ALL
]


@given(cs.streams(Options(delimiters="extended", matching="tolerant")))
def test_streams_are_protocol_chunks(chunks):
    for chunk in chunks:
        assert set(chunk) == {"content", "reasoning"}
        assert all(value is None or isinstance(value, str) for value in chunk.values())


@given(st.data())
def test_chunkings_join_back_to_the_text(data):
    text = data.draw(cs.documents())
    assert "".join(data.draw(cs.chunkings(text))) == text


@given(cs.streams(), st.data())
def test_rechunkings_keep_the_stream_and_its_channels(chunks, data):
    again = data.draw(cs.rechunkings(chunks))
    assert cs.flatten(again) == cs.flatten(chunks)
    assert join(normalize_stream(again)) == join(normalize_stream(chunks))


#: The first example found will do: shrinking it is what costs.
FIRST = settings(phases=[Phase.generate], max_examples=1000, database=None, derandomize=True)
GPT_OSS = Options.from_mapping({"profile": "gpt_oss"})
QWEN3 = Options.from_mapping({"profile": "qwen3"})


def cuts_inside_delimiters(chunks, options):
    """The chunk boundaries that fall strictly inside a delimiter of the stream's content."""
    content = "".join(chunk["content"] or "" for chunk in chunks)
    bounds, offset = set(), 0
    for chunk in chunks:
        offset += len(chunk["content"] or "")
        bounds.add(offset)
    occurrences = options.grammar.occurrences(content)
    return [content[b:e] for b, e, _ in occurrences if any(b < cut < e for cut in bounds)]


@pytest.mark.slow
@pytest.mark.parametrize("options", [GPT_OSS, QWEN3], ids=["gpt_oss", "qwen3"])
@settings(max_examples=40)
@given(data=st.data())
def test_under_atomic_delimiters_no_chunking_cuts_a_delimiter(options, data):
    chunks = data.draw(cs.streams(options))
    assert not cuts_inside_delimiters(chunks, options)
    again = data.draw(cs.rechunkings(chunks, options))
    assert cs.flatten(again) == cs.flatten(chunks)
    assert not cuts_inside_delimiters(again, options)
    text = data.draw(cs.documents(options))
    pieces = data.draw(cs.chunkings(text, options))
    assert not cuts_inside_delimiters([{"content": p} for p in pieces], options)


def test_without_atomic_delimiters_chunkings_do_cut_delimiters():
    options = Options.from_mapping({"profile": "gpt_oss", "atomic_delimiters": False})
    found = lambda chunks: bool(cuts_inside_delimiters(chunks, options))  # noqa: E731
    find(cs.streams(options), found, settings=FIRST)


def content_of(chunks):
    return "".join(chunk["content"] or "" for chunk in chunks)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("options", "what"),
    [
        (QWEN3, lambda text: "<think>a<tool_call>" in text),
        (QWEN3, lambda text: "<tool_call>" in text.partition("<think>")[0]),
        (GPT_OSS, lambda text: "<|channel|>analysis<|message|>" in text and "<|end|>" in text),
        (GPT_OSS, lambda text: "to=functions." in text and "<|call|>" in text),
        (GPT_OSS, lambda text: "<|start|>assistant<|channel|>final<|message|>" in text),
        (
            GPT_OSS,
            lambda text: re.search(r"<\|(?!(start|channel|message|end|return|call)\|>)", text),
        ),
        (GPT_OSS, lambda text: text.endswith("<|chan")),
    ],
    ids=[
        "marker-inside-a-block",
        "marker-outside",
        "analysis",
        "tool-call",
        "final",
        "near-miss",
        "cut-off-token",
    ],
)
def test_streams_under_a_profile_hold_what_matters_to_it(options, what):
    """Tool markers inside and outside blocks where the family has them; harmony messages,
    tool calls, near misses and tokens cut off at the end under harmony framing."""
    find(cs.streams(options), lambda chunks: what(content_of(chunks)), settings=FIRST)


def test_fuzzing_the_reference_finds_nothing(tmp_path: Path):
    # The command over every property, its report and its exit status, on a few examples
    # each: longer searches of the reference are the slow tier's (a time budget, fuzzing
    # through the plugin).
    result = cli(
        "fuzz",
        "--max-examples",
        "10",
        "--seed",
        "1",
        "--database",
        "none",
        "--report-dir",
        str(tmp_path),
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "fuzzing with seed 1" in result.stdout
    data = json.loads((tmp_path / "results.json").read_text())
    jsonschema.validate(data, schema("results.schema.json"))
    fuzz = data["implementations"][0]["fuzz"]
    assert [entry["property"] for entry in fuzz] == list(fuzz_properties())
    assert all(entry["verdict"] == "PASS" and entry["examples"] >= 10 for entry in fuzz)
    assert not (tmp_path / "found").exists()


@pytest.mark.slow
@pytest.mark.parametrize("target", CORPUS_TARGETS)
def test_the_corpus_does_not_catch_the_fuzz_targets(target):
    cases = bundled_corpus().cases
    run = run_implementation(
        connect(parse_impl(f"python:tests.fakes.fuzz_targets:{target}")), cases
    )
    assert [r for r in run.results if not r.verdict.ok] == []


@pytest.mark.slow
@pytest.mark.parametrize("target", ALL)
def test_the_fuzzer_finds_shrinks_and_writes_each_bug(target, tmp_path: Path):
    impl = f"python:tests.fakes.fuzz_targets:{target}"
    reports = tmp_path / "reports"
    # A process of its own: what Hypothesis draws and shrinks to must depend on the seed
    # alone, not on what else a test worker has imported or run before.
    result = conformance_process(
        "fuzz", "--impl", impl, "--seed", "7", "--database", "none", "--report-dir", str(reports)
    )
    assert result.returncode == 1, result.stdout + result.stderr
    found = sorted((reports / "found").glob("*.yaml"))
    assert found, result.stdout
    # Shrunk: a handful of chunks, and characters (three blocks need about forty).
    smallest = min(
        (yaml.safe_load(path.read_text())["cases"][0]["chunks"] for path in found),
        key=lambda chunks: sum(len(c["content"] or "") + len(c["reasoning"] or "") for c in chunks),
    )
    assert len(smallest) <= 6
    assert sum(len(c["content"] or "") + len(c["reasoning"] or "") for c in smallest) <= 60
    # Ready to commit: valid, complete, and it catches the bug in an ordinary run.
    checked = cli("check", "--cases", str(reports / "found"))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    caught = cli(
        "run",
        "--impl",
        impl,
        "--cases",
        str(reports / "found"),
        "--report-dir",
        str(tmp_path / "run"),
    )
    assert caught.returncode == 1, caught.stdout
    reference = cli("run", "--cases", str(reports / "found"), "--report-dir", str(tmp_path / "ref"))
    assert reference.returncode == 0, reference.stdout
    data = json.loads((reports / "results.json").read_text())
    failures = [
        entry
        for entry in data["implementations"][0]["fuzz"]
        if entry["verdict"] == Verdict.FAIL.value
    ]
    # Each bug written once: the others point at the property whose counterexample it is.
    written = [entry for entry in failures if "counterexample" in entry]
    assert written and all(entry["counterexample"]["chunks"] for entry in written)
    assert all(Path(entry["case_file"]).exists() for entry in written)
    assert len({entry["bug"] for entry in written}) == len(written) == len(found)
    assert all("same bug" in entry["reason"] for entry in failures if entry not in written)


@pytest.mark.slow
def test_a_seed_replays_exactly(tmp_path: Path):
    def fuzz(name: str) -> list[dict]:
        cli(
            "fuzz",
            "--impl",
            "python:tests.fakes.fuzz_targets:ThreePieces",
            "--seed",
            "11",
            "--database",
            "none",
            "--property",
            "chunking",
            "--report-dir",
            str(tmp_path / name),
        )
        data = json.loads((tmp_path / name / "results.json").read_text())
        return [
            {k: v for k, v in entry.items() if k not in ("seconds", "case_file")}
            for entry in data["implementations"][0]["fuzz"]
        ]

    assert fuzz("a") == fuzz("b")


@pytest.mark.slow
def test_the_database_replays_known_failures_first(tmp_path: Path):
    database = tmp_path / "db"

    def examples(seed: str) -> int:
        cli(
            "fuzz",
            "--impl",
            "python:tests.fakes.fuzz_targets:NearMissClose",
            "--seed",
            seed,
            "--database",
            str(database),
            "--property",
            "whole",
            "--report-dir",
            str(tmp_path / seed),
        )
        data = json.loads((tmp_path / seed / "results.json").read_text())
        entry = data["implementations"][0]["fuzz"][0]
        assert entry["verdict"] == "FAIL"
        return entry["examples"]

    examples("7")
    assert examples("8") <= 3


@pytest.mark.slow
def test_a_time_budget_runs_until_it_is_spent(tmp_path: Path):
    result = cli(
        "fuzz",
        "--time",
        "3",
        "--property",
        "differential",
        "--database",
        "none",
        "--report-dir",
        str(tmp_path),
    )
    assert result.returncode == 0
    entry = json.loads((tmp_path / "results.json").read_text())["implementations"][0]["fuzz"][0]
    # Slices of examples until the time is spent: at least 2.5 s, however fast the machine.
    assert entry["seconds"] >= 2.5
    assert entry["examples"] >= 250


def test_whitespace_only_differences_are_non_strict():
    from conformance.fuzz.properties import Target, run_property

    connection = connect(parse_impl("python:tests.fakes.broken_impls:TrimsWhitespace"))
    result = run_property(
        "differential", Target(connection, Options()), max_examples=100, seed=1, database=None
    )
    assert result.verdict == Verdict.NON_STRICT
    assert result.reason.startswith("whitespace only")
