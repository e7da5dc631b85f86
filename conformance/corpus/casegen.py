"""Writing new cases: fresh IDs, expectations from the reference for every option profile,
and case files in the corpus's own style (every string double-quoted, invisibles escaped).

Used wherever the suite proposes a case for review: inputs found by the fuzzer, new captures.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from conformance.contracts.normalizer._check import minimal_when, profiles_for, reference_output
from conformance.corpus.cases import case_from_mapping
from conformance.model.cases import Case
from conformance.model.options import DEFAULT, Options

ID_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"


def new_case_id(
    taken: Iterable[str], rng: random.Random | None = None, *, first: str = ID_ALPHABET
) -> str:
    """A random four-character ID that is not in `taken` (corpus IDs and retired IDs).
    `first` narrows the first character, giving a source of cases its own namespace."""
    used = set(taken)
    rng = rng or random.Random()
    for _ in range(100_000):
        candidate = rng.choice(first) + "".join(rng.choice(ID_ALPHABET) for _ in range(3))
        if candidate not in used:
            return candidate
    raise ValueError(f"no free case ID starting with one of {first!r}")


def _as_case(raw: Mapping[str, Any], category: str) -> Case:
    return case_from_mapping(raw, category)


def expectations_for(
    chunks: Sequence[Mapping[str, str | None]], extra: Iterable[Options] = ()
) -> dict[str, Any]:
    """`expected`, `whole` (where it differs) and the `variants` a case with these chunks
    needs to pass `conformance check`, all from the reference. `extra` names profiles with
    opt-in values the case must also have an expectation for."""
    raw: dict[str, Any] = {
        "id": "AAAA",
        "slug": "generated",
        "title": "generated",
        "taxonomy": "X.x",
        "level": "must",
        "chunks": [dict(c) for c in chunks],
        "provenance": [],
    }
    probe = _as_case({**raw, "expected": {"assistant": "", "thinking": ""}}, "generated")
    stream, whole = reference_output(probe, DEFAULT)
    raw["expected"] = stream.to_json()
    if whole != stream:
        raw["whole"] = whole.to_json()
    raw["variants"] = [
        {"when": options.given(), **_channels(probe, options)}
        for options in extra
        if options.differences()
    ]
    # Add the variant the first disagreeing profile needs until none disagrees; each
    # addition can change which expectation other profiles select, so start over.
    for _ in range(64):
        case = _as_case(raw, "generated")
        missing = next(
            (
                (options, output, expectation.when)
                for options in profiles_for(case)
                if not isinstance(expectation := case.expectation(options), str)
                and (output := reference_output(case, options))
                != (expectation.stream, expectation.whole)
            ),
            None,
        )
        if missing is None:
            break
        options, output, selected = missing
        when = minimal_when(case, options, output, within=selected)
        raw["variants"].append({"when": when, **_channels(case, DEFAULT.updated(when))})
    if not raw["variants"]:
        del raw["variants"]
    return {key: raw[key] for key in ("expected", "whole", "variants") if key in raw}


def guess_taxonomy(chunks: Sequence[Mapping[str, Any]], options: Options = DEFAULT) -> str:
    """A first guess at the taxonomy entry of a new input, for the reviewer to confirm."""
    grammar = options.grammar
    content = "".join(c.get("content") or "" for c in chunks)
    matches = list(grammar.delimiter.finditer(content))
    if any(c.get("reasoning") for c in chunks):
        return "NATIVE.with-tags" if matches else "NATIVE.only"
    bounds: list[int] = []
    position = 0
    for chunk in chunks:
        position += len(chunk.get("content") or "")
        bounds.append(position)
    for match in matches:
        inside = [b for b in bounds if match.start() < b < match.end()]
        if len(inside) >= 2:
            return "SPLIT.many-pieces"
        if inside:
            return "SPLIT.close" if grammar.is_close(match.group()) else "SPLIT.open"
    if grammar.hold(content) < len(content):
        return "FLUSH.partial-open"
    if not matches:
        return "TEXT.near-miss" if any(s in content for s in grammar.starts) else "PLAIN.text"
    if grammar.is_close(matches[0].group()):
        return "ORPHAN.close"
    opens = [m for m in matches if not grammar.is_close(m.group())]
    if len(opens) >= 2:
        return "BLOCK.multiple"
    return "BLOCK.inline" if len(opens) < len(matches) else "BLOCK.unclosed"


def _channels(case: Case, options: Options) -> dict[str, Any]:
    stream, whole = reference_output(case, options)
    out: dict[str, Any] = {"expected": stream.to_json()}
    if whole != stream:
        out["whole"] = whole.to_json()
    return out


def quote(text: str) -> str:
    """A YAML double-quoted scalar with every invisible or non-ASCII character escaped.

    Non-BMP characters are written as \\U escapes: YAML reads a \\u surrogate pair as two
    characters, not one."""
    out = ['"']
    for char in text:
        code = ord(char)
        if char in '"\\':
            out.append("\\" + char)
        elif 0x20 <= code < 0x7F:
            out.append(char)
        elif char in "\t\n\r":
            out.append({"\t": "\\t", "\n": "\\n", "\r": "\\r"}[char])
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    out.append('"')
    return "".join(out)


def _flow(value: Any) -> str:
    if isinstance(value, str):
        return quote(value)
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{key}: {_flow(item)}" for key, item in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_flow(item) for item in value) + "]"
    return json.dumps(value)


def render_case_file(
    category: str,
    description: str,
    cases: Sequence[Mapping[str, Any]],
    contract: str | None = None,
) -> str:
    """A case file in the corpus's style, valid under the case schema (or, with `contract`,
    under that contract's)."""
    lines = [f"category: {category}", f"description: {quote(description)}", "cases:"]
    if contract is not None:
        lines.insert(0, f"contract: {contract}")
    for case in cases:
        first = True
        for key, value in case.items():
            lead = "  - " if first else "    "
            first = False
            if key in ("chunks", "variants", "provenance") and value:
                lines.append(f"{lead}{key}:")
                lines += [f"      - {_flow(item)}" for item in value]
            else:
                lines.append(f"{lead}{key}: {_flow(value)}")
    return "\n".join(lines) + "\n"
