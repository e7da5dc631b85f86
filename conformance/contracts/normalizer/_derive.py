"""Derived cases: the written corpus under profiles its files do not name (SPEC.md 5.6).

A case file gives expectations for the enumerated option values and for the opt-in values a
variant names. For any other profile with an opt-in value, a case whose meaning survives the
change stands in with a derived input and an expectation derived from the written one:

- `start_in_reasoning: true`: the written input preceded by the grammar's close delimiter,
  as its own chunk (`~start`) and glued to the first chunk (`~start.glued`), means what the
  written input means with the option off (SPEC 5.2: after the first close, routing goes on
  as usual);
- another grammar (`bracket`, `kimi`, `think_only`, a custom list): the delimiters of the
  default grammar in the input renamed to the target's (`~bracket`, `~custom`), a split
  point inside a delimiter kept at the same relative place; the channels are unchanged,
  since delimiters never reach them;
- the same grammars, input unchanged (`~text`): the default grammar's delimiters are plain
  text under a grammar that does not have them (SPEC 4.4).

Where a transform would change what the case means, no derived case stands in, and the
case's SKIP says why. `conformance check` proves every derived expectation against the
reference (_check.py), as it proves the written ones.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from conformance.model.cases import Case, Derivation, Expectation
from conformance.model.chunks import Channels, Chunk
from conformance.model.grammar import PRESETS
from conformance.model.options import ENUMERATED, Options, enumerated_profiles

#: The grammar every derived case is renamed from: the one case files are written in.
SOURCE = "think"
#: Grammars `conformance check` proves derived cases under, besides the named ones.
CUSTOM_GRAMMARS: tuple[tuple[tuple[str, str], ...], ...] = (
    (("<seed:think>", "</seed:think>"),),
    (("<|begin_of_thought|>", "<|end_of_thought|>"),),
)
#: Text that only means something next to the default names: `<thinker>`, a cut `</thi`,
#: `< think` (a tolerant spelling). Renamed, such a case would test nothing it was written for.
_NEAR_MISS = re.compile(r"<[ \t\n\r\f]*/?[ \t\n\r\f]*th", re.IGNORECASE)


def stand_ins(case: Case, options: Options) -> list[Case]:
    """The cases to run for `case` under `options`: the case itself where it has an
    expectation for it, else the cases derived from it, else the case itself (SKIP, saying
    why none is derived)."""
    if case.pending or case.derived is not None:
        return [case]
    if not isinstance(case.written_expectation(options), str):
        return [case]
    forms = derived_forms(case, options)
    if isinstance(forms, str):
        return [replace(case, not_derived=forms)]
    if case.only:
        forms = [form for form in forms if form.id in case.only]
    return forms


def derived_forms(case: Case, options: Options) -> list[Case] | str:
    """The cases standing in for `case` under `options` (the case itself where it has a
    written expectation), or why there are none."""
    if not isinstance(case.written_expectation(options), str):
        return [case]
    if options.delimiters not in ENUMERATED["delimiters"]:
        return _regrammared(case, options)
    if options.start_in_reasoning:
        return _started(case, options)
    reason = case.written_expectation(options)
    assert isinstance(reason, str)
    return reason


def _started(case: Case, options: Options) -> list[Case] | str:
    source = replace(options, start_in_reasoning=False)
    written = case.written_expectation(source)
    if isinstance(written, str):
        return f"nothing to derive from: {written}"
    close = options.pairs[0][1]
    first = case.chunks[0] if case.chunks else Chunk(content=None)
    own = (Chunk(content=close), *case.chunks)
    glued = (replace(first, content=close + (first.content or "")), *case.chunks[1:])
    forms = [_derived(case, "start", f"{close!r} prefixed as its own chunk", options, own, written)]
    if case.chunks:
        forms.append(
            _derived(
                case, "start.glued", f"{close!r} glued to the first chunk", options, glued, written
            )
        )
    return forms


def _regrammared(case: Case, options: Options) -> list[Case] | str:
    source = replace(options, delimiters=SOURCE)
    inner = derived_forms(case, source)
    if isinstance(inner, str):
        return inner
    forms: list[Case] = []
    reasons: list[str] = []
    for form in inner:
        renamed = _renamed(form, source, options)
        (reasons if isinstance(renamed, str) else forms).append(renamed)  # type: ignore[arg-type]
    if not options.start_in_reasoning:
        text = _as_text(case, source, options)
        (reasons if isinstance(text, str) else forms).append(text)  # type: ignore[arg-type]
    if forms:
        return forms
    return "; ".join(dict.fromkeys(reasons))


def proven_profiles() -> list[Options]:
    """The profiles `conformance check` proves derived cases under: start_in_reasoning with
    each enumerated combination, and each other grammar (named, and the custom lists above)
    with and without it, with each enumerated combination of the other options."""
    base = list(enumerated_profiles())
    out = [replace(p, start_in_reasoning=True) for p in base]
    grammars: list[str | tuple[tuple[str, str], ...]] = [
        *(name for name in PRESETS if name not in ENUMERATED["delimiters"]),
        *CUSTOM_GRAMMARS,
    ]
    for grammar in grammars:
        for start in (False, True):
            out += [
                replace(p, delimiters=grammar, start_in_reasoning=start)
                for p in base
                if p.delimiters == SOURCE
            ]
    return out


def grammar_label(options: Options) -> str:
    return options.delimiters if isinstance(options.delimiters, str) else "custom"


def _renamed(form: Case, source: Options, target: Options) -> Case | str:
    """`form` with the source grammar's delimiters renamed to the target's."""
    expectation = form.expectation(source)
    if isinstance(expectation, str):
        return f"nothing to derive from: {expectation}"
    content = "".join(chunk.content or "" for chunk in form.chunks)
    source_pairs = PRESETS[SOURCE]
    target_pairs = target.pairs
    spans: list[tuple[int, int, str]] = []
    for match in source.grammar.delimiter.finditer(content):
        found = next(
            (
                target_pairs[min(index, len(target_pairs) - 1)][kind]
                for index, pair in enumerate(source_pairs)
                for kind in (0, 1)
                if pair[kind] == match.group()
            ),
            None,
        )
        if found is None:
            return f"it depends on a tolerant spelling ({match.group()!r})"
        spans.append((match.start(), match.end(), found))
    if not spans:
        return "it has no delimiter of the default grammar to rename"
    rest = "".join(_between(content, spans))
    renames = any(new != content[start:end] for start, end, new in spans)
    if renames and _NEAR_MISS.search(rest):
        return "it depends on the default names themselves (text like `<th` next to them)"
    renamed = _rebuilt(content, spans)
    kept = [(start, end) for start, end, _ in _shifted(spans)]
    seen = [m.span() for m in target.grammar.delimiter.finditer(renamed)]
    if seen != kept:
        return "its text would collide with the target grammar's delimiters"
    chunks = _rechunked(form.chunks, spans, renamed)
    label = grammar_label(target)
    transform = f"delimiters renamed to the {label} grammar's"
    if form.derived is not None:
        transform = f"{form.derived.transform}; {transform}"
    return _derived(form, label, transform, target, chunks, expectation)


def _as_text(case: Case, source: Options, target: Options) -> Case | str:
    """`case` unchanged, where the target grammar finds no delimiter in it: all its content
    is text (SPEC 4.4), the default grammar's delimiters included."""
    written = case.written_expectation(source)
    if isinstance(written, str):
        return f"nothing to derive from: {written}"
    content = case.content or ""
    if target.grammar.delimiter.search(content):
        return "its text holds delimiters of the target grammar"
    delimiters = [m.group() for m in source.grammar.delimiter.finditer(content)]
    label = grammar_label(target)
    transform = (
        f"unchanged: {delimiters[0]!r} and the like are text to the {label} grammar"
        if delimiters
        else f"unchanged: no delimiter of the {label} grammar in it"
    )
    # Every content character is visible; native reasoning is thinking, as always.
    channels = Channels(assistant=content, thinking=case.reasoning or "")
    return _derived(case, "text", transform, target, case.chunks, Expectation(channels, channels))


def _between(content: str, spans: Sequence[tuple[int, int, str]]) -> list[str]:
    pieces, at = [], 0
    for start, end, _ in spans:
        pieces.append(content[at:start])
        at = end
    pieces.append(content[at:])
    return pieces


def _rebuilt(content: str, spans: Sequence[tuple[int, int, str]]) -> str:
    pieces = _between(content, spans)
    return "".join(p + (spans[i][2] if i < len(spans) else "") for i, p in enumerate(pieces))


def _shifted(spans: Sequence[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """The spans' places in the renamed content."""
    out, shift = [], 0
    for start, end, new in spans:
        out.append((start + shift, start + shift + len(new), new))
        shift += len(new) - (end - start)
    return out


def _mapped(point: int, spans: Sequence[tuple[int, int, str]]) -> int:
    """Where a cut at `point` of the source content goes in the renamed content. A cut inside
    a delimiter stays inside it: after its first character, before its last, or at the same
    fraction of it."""
    shift = 0
    for start, end, new in spans:
        if point <= start:
            break
        if point < end:
            size, offset = end - start, point - start
            if offset == 1:
                inside = 1
            elif offset == size - 1:
                inside = len(new) - 1
            else:
                inside = min(len(new) - 1, max(1, round(offset * len(new) / size)))
            return start + shift + inside
        shift += len(new) - (end - start)
    return point + shift


def _rechunked(
    chunks: Sequence[Chunk], spans: Sequence[tuple[int, int, str]], renamed: str
) -> tuple[Chunk, ...]:
    out, at = [], 0
    for chunk in chunks:
        if chunk.content is None:
            out.append(chunk)
            continue
        end = at + len(chunk.content)
        out.append(replace(chunk, content=renamed[_mapped(at, spans) : _mapped(end, spans)]))
        at = end
    return tuple(out)


def _derived(
    case: Case,
    suffix: str,
    transform: str,
    options: Options,
    chunks: Sequence[Chunk],
    expectation: Expectation,
) -> Case:
    root = case.derived.source if case.derived is not None else case.id
    suffix = f"{case.id.partition('~')[2]}+{suffix}" if case.derived is not None else suffix
    return replace(
        case,
        id=f"{root}~{suffix}",
        title=f"{case.title.partition(' [derived')[0]} [derived: {transform}]",
        chunks=tuple(chunks),
        expected=expectation.stream,
        whole=expectation.whole if expectation.whole != expectation.stream else None,
        variants=(),
        derived=Derivation(root, transform, options),
        not_derived=None,
        only=(),
    )
