"""A contract that uses both capabilities the normalizer uses (the option profile and
streaming judgement), registered from this test alone: the loader, the engine, the corpus
checker, the expectation files and the fuzzer take it up as they take up the normalizer,
with no change anywhere else.

The toy contract, `leak`, checks one thing: no delta ever shows a delimiter of the run's
grammar in the assistant channel. Its case inputs are written with `{open}` and `{close}`
placeholders, which its plans fill with the first delimiter pair of the profile in force, so
one case means the same under every grammar; its judge looks at each stream as it arrives
and keeps only the worst finding, never the replies.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import strategies as st
from hypothesis.database import InMemoryExampleDatabase

from conformance.contracts import (
    Contract,
    all_checks,
    contract_of,
    fuzz_properties,
    register,
    unregister,
)
from conformance.contracts._fuzzing import Counterexample, PropertyFailure
from conformance.corpus.cases import load_corpus
from conformance.corpus.check import check_corpus, load_taxonomy
from conformance.corpus.expectations import expectations_schema, load_expected_failures
from conformance.engine.runner import run_implementation
from conformance.fuzz.properties import run_property
from conformance.fuzz.target import Target
from conformance.interface import implementation
from conformance.model.cases import CaseFileProblem, CaseIdentity, ContractCase
from conformance.model.chunks import Chunk
from conformance.model.judge import graded
from conformance.model.options import Options
from conformance.model.plans import CheckPlan, Judging, case_result
from conformance.model.requests import Ok, Reply, Request, StreamRequest
from conformance.model.results import SEVERITY, CaseResult, Verdict
from conformance.reference import Normalizer, join, normalize_stream
from conformance.transport.impls import connect
from conformance.transport.spec import parse_impl

from .helpers import bundled_cases_dir

SCHEMA = {
    "type": "object",
    "required": ["contract", "category", "cases"],
    "properties": {
        "contract": {"const": "leak"},
        "category": {"type": "string"},
        "cases": {
            "type": "array",
            "items": {"type": "object", "required": ["id", "input", "expected"]},
        },
    },
}


def filled(text: str, options: Options) -> str:
    """The input text in the profile's grammar: its first delimiter pair in the slots."""
    opening, closing = options.pairs[0]
    return text.replace("{open}", opening).replace("{close}", closing)


def leak_in(deltas: Sequence[Mapping[str, str]], options: Options) -> str | None:
    """Where the assistant channel first shows a delimiter of the grammar, or None."""
    shown = ""
    for step, delta in enumerate(deltas):
        shown += delta["assistant"]
        found = options.grammar.delimiter.search(shown)
        if found:
            return f"delta {step} shows {found.group()!r} in the assistant channel"
    return None


@dataclass
class LeakJudge:
    """Streaming judgement: each reply is judged as it comes and dropped; only the worst
    finding so far is kept."""

    plan: CheckPlan
    options: Options
    pending: int = 0
    worst: tuple[Verdict, str] = (Verdict.PASS, "")

    def __post_init__(self) -> None:
        self.pending = len(self.plan.requests) if self.plan.skip is None else 0
        LeakJudge.made.append(self)

    def add(self, index: int, request: Request, reply: Reply) -> None:
        self.pending -= 1
        if not isinstance(reply, Ok):
            found = (reply.verdict, reply.reason)
        else:
            assert reply.deltas is not None
            leak = leak_in(reply.deltas, self.options)
            wrong = join(reply.deltas)["assistant"] != self.plan.expected["assistant"]
            found = (
                (Verdict.FAIL, f"request {index}: {leak}")
                if leak
                else (Verdict.FAIL, f"request {index}: the answer is not the expected one")
                if wrong
                else (Verdict.PASS, "")
            )
        if SEVERITY.index(found[0]) < SEVERITY.index(self.worst[0]):
            self.worst = found

    def result(self) -> CaseResult:
        if self.plan.skip is not None:
            return case_result(self.plan, Verdict.SKIP, self.plan.skip)
        judgement = graded(*self.worst, self.plan.case.level)
        return case_result(self.plan, judgement.verdict, judgement.reason)


LeakJudge.made = []  # type: ignore[attr-defined]


class LeakContract:
    """The toy contract, written against `conformance.contracts.Contract` directly."""

    NAME = "leak"
    SCHEMA = SCHEMA
    CHECKS = ("leak-chars", "leak-whole-stream")
    PROPERTIES = ("leak",)

    def forms(self, case: CaseIdentity, options: Options) -> Sequence[CaseIdentity]:
        return (case,)

    def plan(self, case: CaseIdentity, options: Options, checks: Sequence[str]) -> list[CheckPlan]:
        assert isinstance(case, ContractCase)
        text = filled(case.input["text"], options)
        chunked = {
            "leak-chars": [StreamRequest([Chunk(char) for char in text])],
            "leak-whole-stream": [StreamRequest([Chunk(text)])],
        }
        return [
            CheckPlan(case, check, chunked[check], case.expected)
            for check in self.CHECKS
            if check in checks
        ]

    def judge(self, plan: CheckPlan, judging: Judging) -> LeakJudge:
        return LeakJudge(plan, judging.options)

    def check_case(self, case: CaseIdentity, *, suggest: bool) -> Iterator[CaseFileProblem]:
        assert isinstance(case, ContractCase)
        options = Options()
        text = filled(case.input["text"], options)
        got = join(normalize_stream([{"content": text}], options))["assistant"]
        if got != case.expected["assistant"]:
            yield CaseFileProblem(case.file, case.line, f"{case.id}: the reference gives {got!r}")

    def fuzz_inputs(self, options: Options) -> st.SearchStrategy[Any]:
        pieces = st.sampled_from(["a", "b", " ", "{open}", "{close}"])
        return st.lists(pieces, max_size=8).map(lambda parts: {"text": "".join(parts)})

    def fuzz_check(self, name: str) -> Any:
        def check(target: Target, value: Any, data: Any) -> None:
            self.fuzz_replay(target, value)

        return check

    def fuzz_replay(self, target: Target, value: Any) -> None:
        chunks = [{"content": char} for char in filled(value["text"], target.options)]
        leak = leak_in(target.stream(chunks), target.options)
        if leak:
            raise PropertyFailure(Counterexample(chunks, leak, contract="leak", payload=value))


LEAK = LeakContract()


# --- implementations, right and wrong on purpose -----------------------------------------


@implementation(name="verbatim")
class Verbatim:
    """Shows the content as it comes: leaks every delimiter."""

    def feed(self, chunk: Mapping[str, Any]) -> dict[str, str]:
        return {"assistant": chunk.get("content") or "", "thinking": ""}

    def finish(self) -> dict[str, str]:
        return {"assistant": "", "thinking": ""}


@implementation(name="loses-tail", options={"delimiters": "bracket"})
class LosesTail(Normalizer):
    """Two bugs at once. It declares the bracket grammar but splits with the default one
    (under its own profile, `[THINK]` is shown), and it holds back the last character of
    the answer after every chunk and forgets it at the end of the stream."""

    def __init__(self) -> None:
        super().__init__(Options())
        self._tail = ""

    def feed(self, chunk: Mapping[str, Any]) -> dict[str, str]:
        delta = dict(super().feed(chunk))
        shown = self._tail + delta["assistant"]
        self._tail, delta["assistant"] = shown[-1:], shown[:-1]
        return delta

    def finish(self) -> dict[str, str]:
        self._tail = ""
        return dict(super().finish())


@pytest.fixture
def leak(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    register(LEAK)
    monkeypatch.setitem(globals(), "Verbatim", Verbatim)
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "leak.yaml").write_text(
        yaml.safe_dump(
            {
                "contract": "leak",
                "category": "leak",
                "cases": [
                    {
                        "id": "LK22",
                        "slug": "a-block-between-words",
                        "title": "A block between two words shows neither delimiter",
                        "taxonomy": "BLOCK.inline",
                        "level": "must",
                        "input": {"text": "a{open}b{close}c"},
                        "expected": {"assistant": "ac"},
                        "provenance": [{"kind": "spec", "ref": "toy"}],
                    },
                    {
                        "id": "LK23",
                        "slug": "an-orphan-close",
                        "title": "An orphan close tag is not shown",
                        "taxonomy": "ORPHAN.close",
                        "level": "should",
                        "input": {"text": "a{close}c"},
                        "expected": {"assistant": "ac"},
                        "provenance": [{"kind": "spec", "ref": "toy"}],
                    },
                ],
            }
        ),
        "utf-8",
    )
    LeakJudge.made.clear()  # type: ignore[attr-defined]
    yield cases
    unregister("leak")


def _verdicts(spec: str, cases: Path, options: Mapping[str, Any] | None = None) -> dict:
    corpus = load_corpus([cases])
    assert not corpus.errors, corpus.errors
    run = run_implementation(connect(parse_impl(spec, options)), corpus.cases)
    return {(r.case, r.check): (r.verdict, r.reason) for r in run.results}


def test_the_registry_takes_a_full_contract_as_it_is(leak: Path) -> None:
    assert isinstance(LEAK, Contract)
    corpus = load_corpus([leak])
    assert {contract_of(case) for case in corpus.cases} == {LEAK}
    assert all_checks()[-2:] == LEAK.CHECKS and fuzz_properties()[-1] == "leak"


@pytest.mark.parametrize("profile", [{}, {"delimiters": "bracket"}, {"delimiters": "kimi"}])
def test_the_reference_passes_under_every_profile(leak: Path, profile: dict) -> None:
    verdicts = _verdicts("reference", leak, profile)
    assert len(verdicts) == 4
    assert {verdict for verdict, _ in verdicts.values()} == {Verdict.PASS}


def test_plans_follow_the_option_profile(leak: Path) -> None:
    (case, _) = load_corpus([leak]).cases
    bracket = Options.from_mapping({"delimiters": "bracket"})
    (plan, _) = LEAK.plan(case, bracket, all_checks())
    (request,) = plan.requests
    assert isinstance(request, StreamRequest)
    assert "".join(c.content or "" for c in request.chunks) == "a[THINK]b[/THINK]c"


def test_judgement_streams_and_keeps_no_reply(leak: Path) -> None:
    verdicts = _verdicts("python:tests.test_contract_capabilities:Verbatim", leak)
    verdict, reason = verdicts[("LK22", "leak-chars")]
    assert verdict == Verdict.FAIL
    # The first delta that shows the whole open tag: `a<think>` after character 7.
    assert reason == "request 0: delta 7 shows '<think>' in the assistant channel"
    # Below MUST, the same failure is NON_STRICT (the level rule, from model/judge.py).
    assert verdicts[("LK23", "leak-chars")][0] == Verdict.NON_STRICT
    made = LeakJudge.made  # type: ignore[attr-defined]
    assert len(made) == 4 and all(j.pending == 0 for j in made)


def test_two_bugs_in_one_implementation_show_under_their_profiles(leak: Path) -> None:
    spec = "python:tests.test_contract_capabilities:LosesTail"
    default = _verdicts(spec, leak, {"delimiters": "think"})
    # Under the default profile its grammar is right: only the lost tail shows.
    assert default[("LK22", "leak-chars")] == (
        Verdict.FAIL,
        "request 0: the answer is not the expected one",
    )
    declared = _verdicts(spec, leak)  # its declared bracket grammar: the leak shows first
    verdict, reason = declared[("LK22", "leak-chars")]
    assert verdict == Verdict.FAIL and "shows '[THINK]' in the assistant channel" in reason


def test_the_corpus_checker_asks_the_contract(leak: Path, tmp_path: Path) -> None:
    taxonomy = load_taxonomy(bundled_cases_dir())
    assert not isinstance(taxonomy, CaseFileProblem)
    corpus = load_corpus([leak])
    assert check_corpus(corpus, taxonomy, set(), coverage=False) == []
    wrong = replace(corpus.cases[0], expected={"assistant": "abc"})
    problems = check_corpus(replace(corpus, cases=(wrong,)), taxonomy, set(), coverage=False)
    assert [p.message for p in problems] == ["LK22: the reference gives 'ac'"]


def test_expectation_files_name_the_contract_checks(leak: Path, tmp_path: Path) -> None:
    enum = expectations_schema()["additionalProperties"]["properties"]["checks"]["items"]
    assert enum["enum"] == list(all_checks())
    path = tmp_path / "verbatim.yaml"
    path.write_text(json.dumps({"LK22": {"reason": "leaks", "checks": ["leak-chars"]}}), "utf-8")
    expected = load_expected_failures(path)
    verdicts = run_implementation(
        connect(parse_impl("python:tests.test_contract_capabilities:Verbatim")),
        load_corpus([leak]).cases,
        expected_failures=expected,
    )
    by_check = {(r.case, r.check): r.verdict for r in verdicts.results}
    assert by_check[("LK22", "leak-chars")] == Verdict.XFAIL
    assert by_check[("LK22", "leak-whole-stream")] == Verdict.FAIL


@pytest.mark.slow
def test_fuzzing_finds_stores_and_replays_the_contract_failure(leak: Path) -> None:
    connection = connect(parse_impl("python:tests.test_contract_capabilities:Verbatim"))
    target = Target(connection, Options.from_mapping({"delimiters": "bracket"}))
    database = InMemoryExampleDatabase()
    found = run_property("leak", target, max_examples=200, seed=1, database=database)
    assert found.verdict == Verdict.FAIL
    assert "[THINK]" in found.reason or "[/THINK]" in found.reason
    (stored,) = list(database.fetch(b""))
    assert "text" in json.loads(stored)
    again = run_property("leak", target, max_examples=200, seed=2, database=database)
    # Replayed from the database first: found again on its first example.
    assert again.verdict == Verdict.FAIL and again.examples == 1
    reference = Target(connect(parse_impl("reference", {"delimiters": "bracket"})), target.options)
    assert run_property("leak", reference, max_examples=100, seed=1).verdict == Verdict.PASS
