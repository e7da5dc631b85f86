"""The reference normalizer: the spec's rules, and its invariants under random inputs."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.model.chunks import Channels
from conformance.model.conservation import unaccounted
from conformance.model.options import CHOICES, Options, OptionsError, enumerated_profiles
from conformance.reference import Normalizer, join, normalize_stream, normalize_whole


def stream(chunks: list[str | dict], options: dict | None = None) -> dict[str, str]:
    shaped = [{"content": c} if isinstance(c, str) else c for c in chunks]
    return dict(join(normalize_stream(shaped, options)))


@pytest.mark.parametrize(
    ("chunks", "options", "assistant", "thinking"),
    [
        (["<think>plan</think>Answer"], None, "Answer", "plan"),
        (["...done</think>answer"], None, "...doneanswer", ""),
        (["...done</think>answer"], {"start_in_reasoning": True}, "answer", "...done"),
        (["<think>abc</thi", "nk>Final"], None, "Final", "abc"),
        (["<", "/think>x"], None, "x", ""),
        (["answer: <th"], None, "answer: <th", ""),
        (["<think>abc"], None, "", "abc"),
        (["<think>abc"], {"unclosed_at_end": "drop"}, "", ""),
        (["a<think>r1</think>b<think>r2</think>c"], None, "abc", "r1r2"),
        (["<think>a<think>b</think>c</think>d"], None, "cd", "ab"),
        (["<think>a</thinking>b"], None, "b", "a"),
        (
            ["a < b > c <thinker> Vec<T> <tag>x</tag>"],
            None,
            "a < b > c <thinker> Vec<T> <tag>x</tag>",
            "",
        ),
        (["<THINK>x</THINK>y"], None, "<THINK>x</THINK>y", ""),
        (["<THINK>x</ think >y"], {"matching": "tolerant"}, "y", "x"),
        (["<thought>x</thought>y"], None, "<thought>x</thought>y", ""),
        (["<thought>x</thought>y"], {"delimiters": "extended"}, "y", "x"),
        (["[THINK]x[/THINK]y"], {"delimiters": "bracket"}, "y", "x"),
        (["\u25c1think\u25b7x\u25c1/think\u25b7y"], {"delimiters": "kimi"}, "y", "x"),
        (["<think>r</think>\r\n\r\nFinal"], None, "\r\n\r\nFinal", "r"),
        ([{"reasoning": "R", "content": "<think>t</think>a"}], None, "a", "R"),
        (
            [{"reasoning": "R", "content": "<think>t</think>a"}],
            {"native_with_tags": "merge"},
            "a",
            "Rt",
        ),
        (["<think>t</think>a", {"reasoning": "R"}], None, "a", "tR"),
        ([{"reasoning": "", "content": "<think>t</think>a"}], None, "a", "t"),
        ([{"reasoning": None, "content": None}, "", "x"], None, "x", ""),
    ],
)
def test_rules(chunks, options, assistant, thinking):
    assert stream(chunks, options) == {"assistant": assistant, "thinking": thinking}


def test_one_delta_per_chunk_plus_flush():
    deltas = normalize_stream([{"content": "a"}, {"content": "<th"}, {"content": None}])
    assert len(deltas) == 4
    assert deltas[1] == {"assistant": "", "thinking": ""}  # `<th` is held back
    assert deltas[3] == {"assistant": "<th", "thinking": ""}  # and released by the flush


def test_holds_back_only_a_possible_delimiter():
    normalizer = Normalizer()
    assert normalizer.feed({"content": "x <thi"}) == {"assistant": "x ", "thinking": ""}
    assert normalizer.feed({"content": "s"}) == {"assistant": "<this", "thinking": ""}
    assert normalizer.feed({"content": "Vec<T"}) == {"assistant": "Vec<T", "thinking": ""}


def test_tolerant_blank_runs_are_bounded():
    eight, nine = " " * 8, " " * 9
    options = {"matching": "tolerant"}
    assert normalize_whole(f"<{eight}think>x</think>y", None, options)["assistant"] == "y"
    assert normalize_whole(f"<{nine}think>x", None, options)["assistant"] == f"<{nine}think>x"
    # Only ASCII case folding: the Kelvin sign is not a K.
    assert normalize_whole("<thin\u212a>x", None, options)["assistant"] == "<thin\u212a>x"


def test_finish_resets_for_the_next_stream():
    normalizer = Normalizer()
    normalizer.feed({"content": "<think>unclosed <th"})
    normalizer.finish()
    assert normalizer.feed({"content": "fresh"}) == {"assistant": "fresh", "thinking": ""}


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"matching": "fuzzy"}, "cannot be 'fuzzy'"),
        ({"colour": "red"}, "unknown option 'colour'"),
        ({"start_in_reasoning": "yes"}, "cannot be 'yes'"),
        ({"delimiters": []}, "at least one pair"),
        ({"delimiters": [{"open": "<a>"}]}, "must be {'open': str, 'close': str}"),
        ({"delimiters": [["<t>", "</t>"], ["<t>>", "</tt>"]]}, "is a prefix of"),
    ],
)
def test_bad_options_are_refused(options, message):
    with pytest.raises(OptionsError, match=message.replace("(", r"\(").replace("{", r"\{")):
        Options.from_mapping(options)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"matching": "fuzzy"}, "cannot be 'fuzzy'"),
        ({"start_in_reasoning": 1}, "cannot be 1"),
        ({"delimiters": "nope"}, "cannot be 'nope'"),
        ({"delimiters": ()}, "at least one pair"),
        ({"delimiters": (("", "</t>"),)}, "must be {'open': str, 'close': str}"),
        ({"delimiters": (("<t", "</t>"), ("<tt", "</tt>"))}, "is a prefix of"),
    ],
)
def test_the_public_constructor_refuses_what_from_mapping_refuses(options, message):
    """`Options(...)` is the public way to build options: it refuses the grammars the other
    entries refuse, where the C and regular-expression scans would disagree."""
    with pytest.raises(OptionsError, match=message.replace("(", r"\(").replace("{", r"\{")):
        Options(**options)


def test_the_public_constructor_takes_pairs_as_json_gives_them():
    options = Options(delimiters=[{"open": "<<", "close": ">>"}])
    assert options.delimiters == (("<<", ">>"),)
    assert options == Options.from_mapping({"delimiters": [["<<", ">>"]]})


def test_custom_delimiters():
    options = {"delimiters": [{"open": "<<", "close": ">>"}]}
    assert stream(["a<", "<b>", ">c"], options) == {"assistant": "ac", "thinking": "b"}


# --- properties --------------------------------------------------------------------------

SEGMENTS = [
    "<think>",
    "</think>",
    "<thinking>",
    "</thinking>",
    "<thought>",
    "</thought>",
    "<THINK>",
    "< think >",
    "</ think>",
    "[THINK]",
    "[/THINK]",
    "\u25c1think\u25b7",
    "\u25c1/think\u25b7",
    "<",
    ">",
    "</",
    "<th",
    "<thi",
    "</thi",
    "nk>",
    "ink>",
    "<thinker>",
    "Vec<T>",
    "a < b",
    "answer",
    " ",
    "\n",
    "\r\n",
    "\t",
    "\u00e9",
    "e\u0301",
    "\U0001f600",
    "\u05d0\u200f",
]
documents = st.lists(st.sampled_from(SEGMENTS) | st.text(max_size=4), max_size=14).map("".join)
native = st.none() | st.sampled_from(["", "R", "<think>r</think>", " "])
profiles = st.sampled_from(
    [
        *enumerated_profiles(),
        Options(start_in_reasoning=True),
        Options(delimiters="bracket"),
        Options(delimiters="kimi", matching="tolerant"),
        Options(start_in_reasoning=True, unclosed_at_end="drop"),
    ]
)


@st.composite
def streams(draw):
    """A document cut at random points, with native reasoning interleaved anywhere."""
    text = draw(documents)
    cuts = sorted(draw(st.sets(st.integers(0, len(text)), max_size=8)))
    pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    return [{"content": piece, "reasoning": draw(native)} for piece in pieces]


def rechunk(chunks, draw):
    """The same input with the content cut elsewhere, native reasoning kept in order."""
    flat: list[tuple[str, str]] = []
    for chunk in chunks:
        if chunk["reasoning"]:
            flat.append(("reasoning", chunk["reasoning"]))
        flat += [("content", ch) for ch in chunk["content"]]
    out: list[dict] = []
    for name, text in flat:
        if name == "content" and out and out[-1].get("content") is not None and draw(st.booleans()):
            out[-1]["content"] += text
        else:
            out.append({name: text})
    return out


@given(streams(), profiles, st.data())
def test_chunking_does_not_change_the_channels(chunks, options, data):
    again = rechunk(chunks, data.draw)
    assert join(normalize_stream(chunks, options)) == join(normalize_stream(again, options))


@given(documents, native, profiles)
def test_whole_equals_a_one_chunk_stream(content, reasoning, options):
    one = join(normalize_stream([{"content": content, "reasoning": reasoning}], options))
    assert normalize_whole(content, reasoning, options) == one


@given(streams(), profiles)
def test_never_emits_what_the_whole_form_would_not(chunks, options):
    """No fragment that later completes into a delimiter ever reaches a channel: every
    step's accumulated text is a prefix of the final text."""
    deltas = normalize_stream(chunks, options)
    final = join(deltas)
    sofar = {"assistant": "", "thinking": ""}
    for delta in deltas:
        for name in sofar:
            sofar[name] += delta[name]
            assert final[name].startswith(sofar[name])


@given(streams(), profiles)
def test_holds_back_at_most_a_delimiter_prefix(chunks, options):
    normalizer = Normalizer(options)
    grammar = options.grammar
    for chunk in chunks:
        normalizer.feed(chunk)
        carry = normalizer._carry
        assert len(carry) <= grammar.max_prefix
        assert carry == "" or grammar.prefix.fullmatch(carry)
        if options.unclosed_at_end == "thinking":
            assert not normalizer._pending


@given(streams(), profiles)
def test_conservation(chunks, options):
    content = "".join(c["content"] for c in chunks)
    reasoning = "".join(c["reasoning"] or "" for c in chunks)
    out = join(normalize_stream(chunks, options))
    kept = options.grammar.delimiter.sub("", content)
    may_drop = options.unclosed_at_end == "drop" or (
        options.native_with_tags == "native_only" and bool(reasoning)
    )
    assert unaccounted(kept, reasoning, Channels(**out), may_drop) is None


def test_every_option_value_is_exercised():
    assert {p.matching for p in enumerated_profiles()} == set(CHOICES["matching"])
