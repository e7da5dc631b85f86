"""Derived cases (SPEC 5.6): every written case under profiles its file does not name."""

from __future__ import annotations

import json
from collections import Counter

import pytest
import yaml

from conformance.contracts.normalizer._check import profiles_for, reference_output
from conformance.contracts.normalizer._derive import derived_forms
from conformance.corpus.cases import bundled_cases_dir, case_from_mapping
from conformance.corpus.check import check_corpus, load_taxonomy
from conformance.corpus.select import Selection
from conformance.engine.plans import profiled
from conformance.engine.runner import run_implementation
from conformance.model.cases import Case, Corpus
from conformance.model.chunks import Channels
from conformance.model.options import Options
from conformance.model.results import Verdict
from conformance.transport.impls import connect
from conformance.transport.spec import parse_impl

from .helpers import bundled_corpus, cli

CASES = bundled_corpus().cases
SEED = [{"open": "<seed:think>", "close": "</seed:think>"}]
#: The profiles issue 11 names: each must leave at most 10% of the reference's checks SKIP.
PROFILES = [
    {"start_in_reasoning": True},
    {"delimiters": "bracket"},
    {"delimiters": "kimi"},
    {"delimiters": SEED},
    {"delimiters": "think_only"},
]
#: Each a whole-corpus run: the default tier runs one, the slow tier the others.
TIERED_PROFILES = [
    pytest.param(
        profile,
        marks=[] if profile == {"delimiters": "bracket"} else [pytest.mark.slow],
        id=json.dumps(profile),
    )
    for profile in PROFILES
]


def case(chunks: list, expected: dict, **extra) -> Case:
    return case_from_mapping(
        {
            "id": "T001",
            "slug": "t",
            "title": "T",
            "taxonomy": "X.x",
            "level": "must",
            "chunks": chunks,
            "expected": expected,
            "provenance": [],
            **extra,
        }
    )


def test_start_in_reasoning_prefixes_the_close_as_its_own_chunk_and_glued():
    written = case(["a<think>b</think>c"], {"assistant": "ac", "thinking": "b"})
    options = Options(start_in_reasoning=True)
    forms = derived_forms(written, options)
    assert not isinstance(forms, str)
    assert [f.id for f in forms] == ["T001~start", "T001~start.glued"]
    assert [c.content for c in forms[0].chunks] == ["</think>", "a<think>b</think>c"]
    assert [c.content for c in forms[1].chunks] == ["</think>a<think>b</think>c"]
    for form in forms:
        assert form.derived is not None and form.derived.source == "T001"
        assert reference_output(form, options) == (Channels("ac", "b"), Channels("ac", "b"))


def test_renaming_keeps_a_cut_inside_a_delimiter_at_the_same_place():
    written = case(["<th", "ink>a</think", ">b"], {"assistant": "b", "thinking": "a"})
    options = Options.from_mapping({"delimiters": SEED})
    forms = derived_forms(written, options)
    assert not isinstance(forms, str)
    renamed = next(f for f in forms if f.id == "T001~custom")
    pieces = [c.content for c in renamed.chunks]
    assert "".join(pieces) == "<seed:think>a</seed:think>b"
    # Cut after three of seven characters of the open, before the close's last character.
    assert pieces == ["<seed", ":think>a</seed:think", ">b"]
    assert renamed.expectation(options).stream == Channels("b", "a")


def test_under_another_grammar_the_default_tags_are_text():
    written = case(["<think>a</think>b"], {"assistant": "b", "thinking": "a"})
    options = Options(delimiters="bracket")
    forms = derived_forms(written, options)
    assert not isinstance(forms, str)
    text = next(f for f in forms if f.id == "T001~text")
    assert text.expectation(options).stream == Channels("<think>a</think>b", "")


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("x<THINK>a</think>b", "tolerant spelling"),
        ("<think>a</think><thinker>b", "default names themselves"),
        ("<think>a</think>[THINK]b", "collide with the target grammar"),
    ],
)
def test_cases_whose_meaning_would_change_keep_their_skip_with_the_reason(content, reason):
    options = Options(delimiters="bracket", matching="tolerant", start_in_reasoning=True)
    expected = {"assistant": "x", "thinking": "y"}  # never judged: not derived
    written = case([content], expected, variants=[])
    forms = derived_forms(written, options)
    assert isinstance(forms, str) and reason in forms
    (kept,) = profiled([written], options)
    assert reason in kept.expectation(options)


@pytest.mark.slow
@pytest.mark.parametrize("profile", TIERED_PROFILES)
def test_the_reference_is_judged_on_nine_checks_in_ten_and_passes(profile):
    result = run_implementation(connect(parse_impl("reference", profile)), CASES)
    verdicts = Counter(r.verdict for r in result.results)
    assert set(verdicts) <= {Verdict.PASS, Verdict.SKIP}
    assert verdicts[Verdict.SKIP] <= 0.10 * len(result.results)
    assert any(r.derived for r in result.results)


def test_check_proves_derived_expectations_against_the_reference(tmp_path):
    # Under the default the reference gives "ab": the written "b" is wrong, and so is
    # every expectation derived from it.
    wrong = case(["a</think>b"], {"assistant": "b", "thinking": ""})
    taxonomy = load_taxonomy(bundled_cases_dir())
    problems = check_corpus(Corpus((wrong,), (), ()), taxonomy, set(), coverage=False)
    derived = [p.message for p in problems if "derived case T001~" in p.message]
    assert any("T001~start" in m for m in derived)
    assert any("T001~bracket" in m for m in derived)


def test_a_derived_id_selects_that_form_only():
    start = Options(start_in_reasoning=True)
    target = next(
        c
        for c in CASES
        if isinstance(c, Case) and c.chunks and isinstance(c.written_expectation(start), str)
    )
    selection = Selection(ids=(f"{target.id}~start.glued",))
    chosen = selection.apply(CASES)
    cases = profiled(chosen, start)
    assert [c.id for c in cases] == [f"{target.id}~start.glued"]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("fake", "family"),
    [("SeedAlsoStripsThink", "text"), ("StartMissesSplitClose", "start")],
)
def test_the_wrong_on_purpose_profiles_fail_run_and_fuzz(tmp_path, fake, family):
    impl = f"python:tests.fakes.broken_impls:{fake}"
    ran = cli("run", "--impl", impl, "--report-dir", str(tmp_path / "run"))
    assert ran.returncode == 1, ran.stderr
    results = json.loads((tmp_path / "run" / "results.json").read_text())["implementations"][0]
    failed = [r for r in results["results"] if r["verdict"] == "FAIL"]
    assert any(r.get("derived") and f"~{family}" in r["case"] for r in failed)
    # The replay of one failing derived check reproduces it.
    first = next(r for r in failed if r.get("derived"))
    # Each run its own report directory: runs in parallel may not share one.
    elsewhere = ("--report-dir", str(tmp_path / "again"))
    again = cli("run", "--impl", impl, "--id", first["case"], "--check", first["check"], *elsewhere)
    assert again.returncode == 1, again.stdout + again.stderr
    fuzzed = cli(
        "fuzz",
        *("--impl", impl, "--property", "differential", "--max-examples", "300"),
        *("--seed", "1", "--database", "none", "--report-dir", str(tmp_path / "fuzz")),
    )
    assert fuzzed.returncode == 1, fuzzed.stderr
    # A case file per distinct bug found: each one checks, its expectation holds for the
    # reference under the profile the fake declares, and the fake fails it.
    found = sorted((tmp_path / "fuzz" / "found").glob("*.yaml"))
    assert found
    for path in found:
        checked = cli("check", "--cases", str(path))
        assert checked.returncode == 0, checked.stdout + checked.stderr
        declared = yaml.safe_load(path.read_text())["cases"][0]
        profile = json.dumps(declared["variants"][-1]["when"])
        reference = cli(
            "run", "--impl", "reference", "--options", profile, "--cases", str(path), *elsewhere
        )
        assert reference.returncode == 0, reference.stdout + reference.stderr
        fails = cli("run", "--impl", impl, "--cases", str(path), *elsewhere)
        assert fails.returncode == 1, fails.stdout + fails.stderr


def test_found_case_variants_outrank_the_one_they_correct():
    """A found case's variants for an opt-in value: each added variant must outrank the one
    selected before it, or generation repeats the same `when` until it gives up."""
    from conformance.corpus.casegen import expectations_for

    chunks = [{"content": "", "reasoning": "R"}, {"content": "answer", "reasoning": None}]
    body = expectations_for(chunks, [Options(start_in_reasoning=True)])
    whens = [json.dumps(v["when"], sort_keys=True) for v in body["variants"]]
    assert len(whens) == len(set(whens)) <= 4
    found = case(chunks, body["expected"], variants=body["variants"])
    for options in profiles_for(found):
        expectation = found.expectation(options)
        assert not isinstance(expectation, str)
        assert reference_output(found, options) == (expectation.stream, expectation.whole)


def test_a_variant_naming_the_opt_in_value_outranks_one_with_more_keys():
    """SPEC 5.5: opt-in values first, then most keys. Ranking by keys alone would select
    the two-key variant, which cannot apply under start_in_reasoning, and give SKIP."""
    written = case(
        ["a</think>b"],
        {"assistant": "ab", "thinking": ""},
        variants=[
            {
                "when": {"matching": "tolerant", "unclosed_at_end": "drop"},
                "expected": {"assistant": "ab", "thinking": ""},
            },
            {"when": {"start_in_reasoning": True}, "expected": {"assistant": "b", "thinking": "a"}},
        ],
    )
    options = Options(start_in_reasoning=True, matching="tolerant", unclosed_at_end="drop")
    expectation = written.expectation(options)
    assert not isinstance(expectation, str)
    assert expectation.when == {"start_in_reasoning": True}
    assert reference_output(written, options) == (Channels("b", "a"), Channels("b", "a"))


def test_results_of_derived_cases_are_written_and_read_back(tmp_path):
    """results.json carries each derived result's origin, and loads back (diff, replay)."""
    from conformance.engine.runner import new_run
    from conformance.reports import load_results, write_reports

    start = Options.from_mapping({"start_in_reasoning": True})
    source = next(c for c in profiled(CASES, start) if isinstance(c, Case) and c.derived)
    chosen = [c for c in CASES if c.id == source.derived.source]
    spec = parse_impl("reference", {"start_in_reasoning": True})
    run = new_run([run_implementation(connect(spec), chosen, checks=["stream"])], {})
    write_reports(run, tmp_path)
    loaded = load_results(tmp_path / "results.json")
    derived = [r for r in loaded.implementations[0].results if r.derived]
    assert derived and all(r.derived["from"] == source.derived.source for r in derived)
