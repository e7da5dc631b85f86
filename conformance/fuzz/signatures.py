"""Bug signatures: what tells two fuzzing failures apart, so that each distinct bug is
reported (and shrunk) on its own, and the same bug found by several properties once.

A signature is the bug class of the channels (`conformance.model.bugs.channel_bug`: what
leaked or was lost) and what differs, read off the difference rather than the input (a whole
`close` or `open` delimiter, a `fragment` of one, other `text`):

    delimiter-shown/close                a stray close delimiter is shown in the answer
    delimiter-fragment-shown/fragment    the `<` of a delimiter split across chunks is shown
    text-dropped/fragment                a partial delimiter at the end of the stream is lost

Hypothesis tells failures apart by the type of the exception and where it is raised: each
signature raises a `PropertyFailure` subclass of its own (`distinct`), from one place, so
Hypothesis keeps, shrinks and reports one counterexample per signature.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from typing import Any

from conformance.contracts._fuzzing import Counterexample, PropertyFailure
from conformance.corpus.casegen import guess_taxonomy
from conformance.model.bugs import channel_bug
from conformance.model.grammar import Grammar
from conformance.model.options import Options
from conformance.reference import join, normalize_stream

#: A delta released text the final channels do not hold there, though they end up right.
RELEASED_EARLY = "released-early"
#: The implementation failed to answer (an error reply) rather than answered wrongly.
FAILED = "implementation-failed"


def changed(expected: Mapping[str, str], actual: Mapping[str, str], options: Options) -> str:
    """What the text that differs is: a whole `open` or `close` delimiter, a `fragment` of
    one (`<`, `</thi`, `nk>`), or other `text`. Read off the difference, not the input: a
    feature of the input the bug does not need (native reasoning next to it, a block before
    it, a split elsewhere) must not make a signature of its own, or shrinking could not
    remove it."""
    name = "assistant" if expected["assistant"] != actual["assistant"] else "thinking"
    old, new = expected[name], actual[name]
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    pieces = [
        old[i1:i2] + new[j1:j2] for op, i1, i2, j1, j2 in matcher.get_opcodes() if op != "equal"
    ]
    text = "".join(pieces)
    grammar = options.grammar
    for kind in ("close", "open"):
        if _count(new, kind, grammar) > _count(old, kind, grammar):
            return kind
    match = grammar.delimiter.search(text)
    if match is not None:
        return "close" if grammar.is_close(match.group()) else "open"
    delimiters = [d for pair in options.pairs for d in pair]
    if pieces and all(_fragments(piece.strip(), delimiters) for piece in pieces):
        return "fragment"
    return "text"


def _count(text: str, kind: str, grammar: Grammar) -> int:
    found = grammar.delimiter.findall(text)
    return sum(grammar.is_close(d) == (kind == "close") for d in found)


def _fragments(text: str, delimiters: list[str]) -> bool:
    """Whether `text` is made of pieces of delimiters: part of one (`</thi`), or their
    characters with at least one that is not a letter (`<<`, `nk>`)."""
    if not text:
        return False
    if any(text in delimiter for delimiter in delimiters):
        return True
    characters = set("".join(delimiters))
    return set(text) <= characters and not all(char.isalnum() for char in text)


def signature(example: Counterexample, options: Options, prop: str = "") -> str:
    """The bug signature of a counterexample of the property `prop`:
    `<bug class>/<what differs>`."""
    if example.contract is not None:
        # Another contract's property: its failures are told apart by the contract alone.
        return f"{FAILED if example.error else 'wrong'}/{example.contract}"
    chunks = example.chunks
    if example.error:
        return f"{FAILED}/{guess_taxonomy(chunks, options).split('.')[0].lower()}"
    expected = dict(join(normalize_stream(chunks, options)))
    # The implementation's wrong output is the side that differs from the reference (the
    # whole property has the stream on the `expected` side, the whole form on the other).
    sides = (
        (example.expected, example.actual)
        if prop == "whole"
        else (example.actual, example.expected)
    )
    for side in sides:
        if side is not None and dict(side) != expected:
            bug = channel_bug(expected, side, options.grammar).name
            return f"{bug}/{changed(expected, side, options)}"
    return f"{RELEASED_EARLY}/text"


_CLASSES: dict[str, type[PropertyFailure]] = {}


def failure_class(name: str) -> type[PropertyFailure]:
    """The `PropertyFailure` subclass of one signature, the same class every time."""
    cls = _CLASSES.get(name)
    if cls is None:
        cls = type(f"PropertyFailure[{name}]", (PropertyFailure,), {"__module__": __name__})
        _CLASSES[name] = cls
    return cls


def distinct(failure: PropertyFailure, options: Options, prop: str = "") -> PropertyFailure:
    """The failure as an instance of its signature's class, to be raised where every
    signature is raised (and outside any `except` block: Hypothesis tells failures apart by
    the exception they were raised while handling too)."""
    name = signature(failure.example, options, prop)
    out = failure_class(name)(failure.example)
    out.signature = name
    return out


def size(counterexample: Mapping[str, Any] | None) -> tuple[int, int, int]:
    """How large a counterexample is, smallest first: characters, chunks, then its JSON."""
    if not counterexample:
        return (0, 0, 0)
    chunks = counterexample.get("chunks") or []
    characters = sum(len(c.get("content") or "") + len(c.get("reasoning") or "") for c in chunks)
    body = counterexample.get("input", chunks)
    return (characters, len(chunks), len(json.dumps(body, ensure_ascii=False)))
