"""Every example in SPEC.md holds: the spec, the reference and the judge agree.

SPEC.md writes examples in fenced blocks of `key: JSON` lines:
- `example`: `options`, then `chunks` (with optional `deltas`) or `whole`, then the expected
  `assistant` and `thinking`;
- `comparison`: `expected`, `actual`, optional `level`, and the `verdict`;
- `holdback`: `chunks`, the `reference` and an `impl`ementation's deltas, the per-step
  `holdback` and the `verdict`.

The table of options (SPEC.md 5.1) lists exactly the options of `conformance.model.options`,
and the table of model-family profiles (5.9) exactly the families of
`conformance.model.families`, with their values and engines.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import pytest

from conformance.model.chunks import Channels
from conformance.model.families import FAMILIES
from conformance.model.judge import behind, compare, holdback, released
from conformance.model.options import OPTION_NAMES
from conformance.reference import join, normalize_stream, normalize_whole

SPEC = Path(__file__).resolve().parent.parent / "SPEC.md"
BLOCK = re.compile(r"^```(example|comparison|holdback)\n(.*?)^```$", re.S | re.M)
_decoder = json.JSONDecoder()
#: A row of the family table: the profile, the models, the options as JSON (in `<code>` with
#: HTML entities where the JSON holds a `|`, which would end a cell), the engines' parsers.
FAMILY_ROW = re.compile(r"^\| `(\w+)` \| [^|]* \| (`[^`]+`|<code>.*?</code>) \| (.*) \|$", re.M)


def blocks() -> list[Any]:
    text = SPEC.read_text("utf-8")
    found = []
    for match in BLOCK.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        found.append(pytest.param(match.group(1), match.group(2), id=f"SPEC.md:{line}"))
    return found


def fields(body: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in filter(str.strip, body.splitlines()):
        key, sep, rest = line.partition(":")
        assert sep and key not in out, f"bad line {line!r}"
        out[key.strip()] = rest.strip()
    return out


def values(text: str) -> list[Any]:
    """Several JSON values separated by blanks (a row of deltas)."""
    out, index = [], 0
    while index < len(text):
        if text[index] == " ":
            index += 1
            continue
        value, index = _decoder.raw_decode(text, index)
        out.append(value)
    return out


def chunks_of(text: str) -> list[dict[str, Any]]:
    return [c if isinstance(c, dict) else {"content": c} for c in json.loads(text)]


def as_deltas(rows: list[list[str]]) -> list[dict[str, str]]:
    return [{"assistant": a, "thinking": t} for a, t in rows]


@pytest.mark.parametrize(("kind", "body"), blocks())
def test_spec_example(kind: str, body: str) -> None:
    f = fields(body)
    options = json.loads(f.get("options", "{}"))
    if kind == "example":
        if "chunks" in f:
            deltas = normalize_stream(chunks_of(f["chunks"]), options)
            if "deltas" in f:
                assert as_deltas(values(f["deltas"])) == deltas
            got = join(deltas)
        else:
            whole = json.loads(f["whole"])
            got = normalize_whole(whole.get("content"), whole.get("reasoning"), options)
        assert got == {
            "assistant": json.loads(f["assistant"]),
            "thinking": json.loads(f["thinking"]),
        }
    elif kind == "comparison":
        expected = Channels(**json.loads(f["expected"]))
        verdict = compare(expected, json.loads(f["actual"]), f.get("level", "must")).verdict
        assert verdict.value == f["verdict"]
    else:
        chunks = chunks_of(f["chunks"])
        reference = normalize_stream(chunks, options)
        assert as_deltas(values(f["reference"])) == reference
        impl = as_deltas(values(f["impl"]))
        lag, _ = holdback(behind(released(impl), released(reference)))
        assert lag == max(0, *values(f["holdback"]))
        verdict = "FAIL" if join(impl) != join(reference) else "NON_STRICT" if lag else "PASS"
        assert verdict == f["verdict"]


def test_the_spec_has_examples() -> None:
    assert len(blocks()) >= 90


def section(number: str) -> str:
    """The text of SPEC.md's section `number` (`5.9`), up to the next heading."""
    text = SPEC.read_text("utf-8")
    start = text.index(f"### {number} ")
    return text[start : text.index("\n#", start)]


def test_the_options_table_lists_every_option() -> None:
    names = re.findall(r"^\| `(\w+)` \|", section("5.1"), re.M)
    assert sorted(names) == sorted(OPTION_NAMES)


def family_table() -> dict[str, tuple[Any, list[tuple[str, str]]]]:
    rows = {}
    for match in FAMILY_ROW.finditer(section("5.9")):
        cell = match.group(2)
        options = html.unescape(cell[6:-7]) if cell.startswith("<code>") else cell[1:-1]
        engines = re.findall(r"(\w+) `([^`]+)`", match.group(3))
        rows[match.group(1)] = (json.loads(options), engines)
    return rows


def test_the_family_table_lists_every_family_with_its_values_and_engines() -> None:
    rows = family_table()
    assert list(rows) == list(FAMILIES)
    for name, family in FAMILIES.items():
        options, engines = rows[name]
        assert options == family.options, name
        assert engines == [(source.engine, source.parser) for source in family.sources], name
