"""The reference against its former, slower self (tests/reference_oracle.py): the same deltas,
one for one, for every input, chunking and option profile. Promptness included: what each
delta releases, not only the final channels, must not change. Under both scans of exact
grammars: the C one (conformance/model/_scan.c) and the regular expressions it stands in for
where it is not built."""

from __future__ import annotations

import dataclasses
import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance import strategies as cs
from conformance.model import options as options_module
from conformance.model.c_scan import C_SCAN, C_SCAN_STATUS
from conformance.model.document import cut, realistic_document
from conformance.model.grammar import MAX_BLANKS, Grammar, compile_grammar
from conformance.model.options import Options, enumerated_profiles
from conformance.reference import Normalizer, normalize_stream, normalize_whole
from tests.reference_oracle import oracle_stream

CUSTOM = [
    (("<|begin_of_thought|>", "<|end_of_thought|>"),),
    (("<<", ">>"),),
    (("BEGIN", "END"),),
    (("<seed:think>", "</seed:think>"), ("<think>", "</think>")),
    (("k>", "</k>"),),
    (("ab", "bc"), ("ca", "xa")),
]
PROFILES = [
    *enumerated_profiles(),
    Options(start_in_reasoning=True),
    Options(start_in_reasoning=True, unclosed_at_end="drop", native_with_tags="merge"),
    Options(delimiters="bracket"),
    Options(delimiters="bracket", matching="tolerant"),
    Options(delimiters="kimi"),
    Options(delimiters="kimi", matching="tolerant", start_in_reasoning=True),
    *(Options(delimiters=pairs) for pairs in CUSTOM),
    *(Options(delimiters=pairs, matching="tolerant") for pairs in CUSTOM),
]
IDS = [repr(options.differences()) for options in PROFILES]


@pytest.fixture(params=["c", "regex"])
def scan(request, monkeypatch):
    """Which scan exact grammars use: the C one, or the regular expressions (as on a machine
    where it was not built)."""
    if request.param == "c":
        if C_SCAN is None:
            pytest.skip(f"the C scan is not used: {C_SCAN_STATUS}")
        return
    twins: dict[tuple, Grammar] = {}

    def regex_grammar(pairs, tolerant, markers=()):
        key = (pairs, tolerant, markers)
        if key not in twins:
            grammar = compile_grammar(pairs, tolerant, markers)
            twins[key] = dataclasses.replace(grammar, c_scan=None, memo={})
        return twins[key]

    monkeypatch.setattr(options_module, "compile_grammar", regex_grammar)
    assert Options().grammar.c_scan is None


#: Many examples, under each scan (the `scan` fixture is the same for every example).
UNDER_EACH_SCAN = settings(
    max_examples=1500, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def assert_same(chunks, options):
    assert normalize_stream(chunks, options) == oracle_stream(chunks, options)


@st.composite
def profile_and_stream(draw):
    options = draw(st.sampled_from(PROFILES))
    return options, draw(cs.streams(options))


@pytest.mark.slow
@UNDER_EACH_SCAN
@given(profile_and_stream())
def test_same_deltas_as_the_oracle(scan, case):
    options, chunks = case
    assert_same(chunks, options)


#: Pieces that make long texts: scans of more than a token-sized chunk take the other path.
LONG_PIECES = [
    "<think>",
    "</think>",
    "<thinking>",
    "</thinking>",
    "<THINK>",
    "< think >",
    "</ think\t>",
    "[THINK]",
    "[/ think ]",
    "\u25c1think\u25b7",
    "\u25c1/think\u25b7",
    "<|begin_of_thought|>",
    "<|end_of_thought|>",
    "BEGIN",
    "end",
    "<<",
    ">>",
    "k>",
    "</k>",
    "abcaxa",
    "<",
    "<th",
    "</thi",
    "nk>",
    "king>",
    "k",
    "<thinker>",
    "Vec<T>",
    " " * MAX_BLANKS,
    " " * (MAX_BLANKS + 1),
    "prose and more prose, ",
    "\U0001f600",
]
long_texts = st.lists(st.sampled_from(LONG_PIECES), min_size=1, max_size=40).map("".join)


@pytest.mark.slow
@UNDER_EACH_SCAN
@given(
    st.sampled_from(PROFILES),
    long_texts,
    st.lists(st.integers(1, 70), min_size=1, max_size=6),
    st.lists(st.sampled_from([None, "", "R"]), max_size=4),
)
def test_same_deltas_on_long_texts_in_any_chunk_sizes(scan, options, text, sizes, natives):
    chunks = []
    position = 0
    for index, size in enumerate(itertools.cycle(sizes)):
        if position >= len(text):
            break
        native = natives[index % len(natives)] if natives else None
        chunks.append({"content": text[position : position + size], "reasoning": native})
        position += size
    assert_same(chunks, options)
    assert normalize_whole(text, None, options) == _oracle_whole(text, options)


def _oracle_whole(text, options):
    deltas = oracle_stream([{"content": text, "reasoning": None}], options)
    return {
        "assistant": deltas[0]["assistant"] + deltas[1]["assistant"],
        "thinking": deltas[0]["thinking"] + deltas[1]["thinking"],
    }


@pytest.mark.slow
@pytest.mark.parametrize("options", PROFILES, ids=IDS)
def test_same_deltas_on_the_realistic_document(scan, options):
    """In chunks of each size (one test for them all: the sizes share the profile's grammar)."""
    text = realistic_document(6000, seed=3)
    for size in (1, 2, 3, 4, 7, 16, 64, 4096):
        chunks = [{"content": piece} for piece in cut(text, size)]
        assert normalize_stream(chunks, options) == oracle_stream(chunks, options), size


@pytest.mark.parametrize("options", PROFILES, ids=IDS)
def test_memo_entries_are_reused_across_streams(options):
    """A scan remembered for one stream holds for another in a different state."""
    pieces = ["a<", "thi", "nk>", "b</", "think>", "<t", "c", "<", "/think>"]
    chunks = [{"content": piece} for piece in pieces * 3]
    for _ in range(2):
        assert_same(chunks, options)
    normalizer = Normalizer(options)
    for chunk in chunks:
        normalizer.feed(chunk)
    assert len(normalizer._carry) <= options.grammar.max_prefix


@pytest.mark.parametrize(
    "chunks",
    [
        # Found by `conformance fuzz` (chunking): body held back before the first native
        # reasoning is kept only up to the next delimiter, on the long-text path too.
        [
            {"content": "<think><t", "reasoning": None},
            {"content": "hink>", "reasoning": "R"},
            {"content": "answer</think></think>", "reasoning": None},
        ],
        [
            {"content": "<think><t", "reasoning": None},
            {"content": "hink>answer</think></think>", "reasoning": "R"},
        ],
    ],
)
def test_body_kept_before_native_reasoning_ends_at_the_next_delimiter(scan, chunks):
    assert_same(chunks, Options())
    assert_same(chunks, Options(unclosed_at_end="drop"))
