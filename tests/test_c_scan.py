"""The C scan of exact grammars (conformance/model/_scan.c) against the regular expressions
it stands in for: the same occurrences, in the same order, and the same held-back suffix,
for any grammar and any text, in texts of every character width; and what it refuses."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from functools import partial

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.model.c_scan import C_SCAN, C_SCAN_STATUS
from conformance.model.grammar import compile_grammar
from conformance.model.options import Options
from tests.helpers import COMMAND, examples

#: Not built (no C compiler at install time), turned off (CONFORMANCE_PURE_PYTHON: the
#: regular expressions are under test) or stale: nothing here to test.
pytestmark = pytest.mark.skipif(C_SCAN is None, reason=f"the C scan is not used: {C_SCAN_STATUS}")

#: Characters of every width CPython stores a str in (1, 2 and 4 bytes), and the ones the
#: delimiters below are made of, so that near misses are frequent.
ALPHABET = "ab<>/k\u00e9\u05e9\u25c1\U0001f600"


def regex_scan(grammar, text):
    """`Grammar.scan` without the C scan, from the delimiter pattern itself."""
    found = tuple(
        (m.start(), m.end(), grammar.is_close(m.group())) for m in grammar.delimiter.finditer(text)
    )
    hold = dataclasses.replace(grammar, c_scan=None).hold(text, found[-1][1] if found else 0)
    return (found, hold) if found else hold


def occurrences(scan):
    return () if isinstance(scan, int) else scan[0]


@st.composite
def grammars_and_texts(draw):
    """An exact grammar whose delimiters share a core (so that the C scan applies: it looks
    for a piece every delimiter has), and a text made of its delimiters, their pieces and
    the alphabet, long enough to cross several vector rounds."""
    core = draw(st.text(ALPHABET, min_size=1, max_size=3))
    affix = st.text(ALPHABET, max_size=3)
    count = draw(st.integers(1, 3))
    delimiters = draw(
        st.lists(
            st.builds(lambda a, b: a + core + b, affix, affix),
            min_size=2 * count,
            max_size=2 * count,
        )
    )
    pairs = tuple(zip(delimiters[::2], delimiters[1::2], strict=True))
    grammar = compile_grammar(pairs, False)
    pieces = [*delimiters, *(d[: len(d) // 2] for d in delimiters), *ALPHABET, core]
    text = "".join(draw(st.lists(st.sampled_from(pieces), max_size=120)))
    return grammar, text


@pytest.mark.slow
@examples(150, 600)
def test_the_same_scan_as_the_regex(max_examples):
    @settings(max_examples=max_examples)
    @given(grammars_and_texts())
    def same(case):
        grammar, text = case
        assert grammar.c_scan is not None
        assert grammar.scan(text) == regex_scan(grammar, text)

    same()


@pytest.mark.parametrize("preset", ["think", "extended", "think_only", "bracket", "kimi"])
@pytest.mark.parametrize(
    "filler",
    ["prose ", "caf\u00e9 ", "\u05e9\u05dc\u05d5\u05dd ", "\U0001f600 ", "<thinker> hink "],
    ids=["ascii", "latin-1", "two-byte", "four-byte", "near-misses"],
)
def test_presets_in_texts_of_every_width(preset, filler):
    grammar = Options(delimiters=preset).grammar
    delimiters = [d for pair in grammar.pairs for d in pair]
    # Delimiters at the very start and end, inside vector rounds and across their edges.
    text = (
        "".join(delimiters[i % len(delimiters)] + filler * (i % 9) for i in range(60))
        + delimiters[0]
    )
    scan = grammar.scan(text)
    assert scan == regex_scan(grammar, text)
    assert len(occurrences(scan)) == 61
    # A delimiter cut short at the end is held back, and only it.
    cut = text[:-1]
    assert grammar.scan(cut) == regex_scan(grammar, cut)
    assert grammar.scan(cut)[1] == len(cut) - len(delimiters[0]) + 1


def test_a_text_too_narrow_for_the_anchor_has_no_occurrence():
    # The kimi delimiters' U+25B7 cannot be in a text stored one byte per character, though
    # U+00B7 has its low byte.
    grammar = Options(delimiters="kimi").grammar
    text = "think k\u00b7 \u00b7think\u00b7 " * 100
    assert grammar.scan(text) == len(text) == regex_scan(grammar, text)


def test_overlapping_candidates_are_taken_leftmost_then_longest():
    grammar = compile_grammar((("abab", "ba"), ("aba", "b")), False)
    assert grammar.c_scan is not None
    for text in ["ababab", "abababa", "bababab", "aabab", "abba" * 20, "aba" * 30]:
        assert grammar.scan(text) == regex_scan(grammar, text)


def test_grammars_beyond_its_bounds_scan_with_the_regex():
    many = tuple((f"<t{i}>", f"</t{i}>") for i in range(C_SCAN.MAX_NEEDLES // 2 + 1))
    assert compile_grammar(many, False).c_scan is None
    size = C_SCAN.MAX_CHARS // 40 + 1
    long = tuple((f"<{i:02}" + "t" * size, f"</{i:02}" + "t" * size) for i in range(20))
    assert compile_grammar(long, False).c_scan is None
    # Tolerant matching has blank runs and case: only the regular expressions do that.
    assert Options(matching="tolerant").grammar.c_scan is None


@pytest.mark.parametrize(
    ("args", "error", "message"),
    [
        ((("<t>",), (False,), "t"), TypeError, "scan takes needles"),
        ((["<t>"], (False,), "t", "x"), TypeError, "scan takes needles"),
        ((("<t>", 3), (False, True), "t", "x"), TypeError, "must be str"),
        ((("<t>",), (False, True), "t", "x"), ValueError, "one tag per needle"),
        ((("<t>", "</t>"), (False, True), "t", "x"), ValueError, "longest first"),
        ((("<t>",), (False,), "q", "x"), ValueError, "anchor must be in every needle"),
        ((("<t>",), (False,), "", "x"), ValueError, "1 to 64 needles and an anchor"),
        (((), (), "t", "x"), ValueError, "1 to 64 needles and an anchor"),
    ],
)
def test_bad_arguments_are_refused(args, error, message):
    with pytest.raises(error, match=message):
        C_SCAN.scan(*args)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("pure", "scan"), [("", "delimiter scan: C"), ("1", "delimiter scan: regular expressions")]
)
def test_the_version_says_which_scan_runs_and_the_environment_turns_it_off(pure, scan):
    env = {**os.environ, "CONFORMANCE_PURE_PYTHON": pure}
    done = subprocess.run(
        [*COMMAND, "--version"], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert scan in done.stdout


def _rss() -> int:
    """This process's resident memory in bytes (C allocations too, unlike tracemalloc)."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="reads /proc/self/statm")
def test_scanning_leaks_neither_memory_nor_references():
    needles, _, anchor = Options(delimiters="extended").grammar.c_scan.args
    # Tags of its own: each occurrence returned holds one, so a result never freed shows.
    tags = tuple(object() for _ in needles)
    texts = [
        "plain prose, no delimiter " * 3,
        "<think>a</think> b <thinking>c</thinking> <thi",
        "caf\u00e9 <think>\u00e9</think> <reasoning>\u00e9</reasoning>",
        "\u05e9\u05dc\u05d5\u05dd " * 8,
        "\u05e9 <thought>\u05e9</thought> <reflection>",
        "\U0001f600 " * 16,
        "\U0001f600 <think>\U0001f600</think> </reas",
    ]
    # More occurrences than the scan keeps on its stack: its heap list is freed too.
    many = "<think>x</think>" * 50
    before = [sys.getrefcount(o) for o in (needles, anchor, *tags, *texts, many)]

    def scan_all(rounds: int) -> None:
        for text in texts:
            for _ in range(rounds):
                scan(needles, tags, anchor, text)
        for _ in range(rounds // 10):
            scan(needles, tags, anchor, many)

    scan = C_SCAN.scan
    scan_all(5_000)  # warm-up: the allocator's arenas and free lists fill
    rss = _rss()
    scan_all(50_000)  # 355,000 scans: a leak of one small tuple a scan is 20 MB
    assert _rss() - rss < 2 << 20
    assert [sys.getrefcount(o) for o in (needles, anchor, *tags, *texts, many)] == before


@pytest.mark.slow
@examples(100, 300)
def test_the_portable_loop_scans_as_the_vectors_do(max_examples, tmp_path, monkeypatch):
    """What compilers without GCC's vector extensions (MSVC) build, built here with GCC."""
    import importlib.util

    from hatch_build import build_extension
    from tests.helpers import ROOT

    monkeypatch.setenv("CFLAGS", "-DCONFORMANCE_SCAN_PORTABLE")
    built = build_extension(ROOT, tmp_path)
    spec = importlib.util.spec_from_file_location("conformance.model._scan", built)
    assert spec is not None and spec.loader is not None
    portable = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(portable)
    assert (portable.VECTORS, C_SCAN.VECTORS) == (0, 1)

    @settings(max_examples=max_examples)
    @given(grammars_and_texts())
    def same(case):
        grammar, text = case
        ported = dataclasses.replace(grammar, c_scan=partial(portable.scan, *grammar.c_scan.args))
        assert ported.scan(text) == regex_scan(grammar, text)

    same()
    for preset in ("think", "kimi"):
        grammar = Options(delimiters=preset).grammar
        ported = partial(portable.scan, *grammar.c_scan.args)
        text = "".join(f"{d} caf\u00e9 \U0001f600 " for pair in grammar.pairs for d in pair) * 9
        assert ported(text) == grammar.scan(text) == regex_scan(grammar, text)
