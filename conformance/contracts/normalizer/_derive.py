"""Derived cases: the written corpus under profiles its files do not name (SPEC.md 5.6).

A case file gives expectations for the enumerated option values and for the opt-in values a
variant names. For any other profile with an opt-in value, a case whose meaning survives the
change stands in with a derived input and an expectation derived from the written one:

- `start_in_reasoning: true`: the written input preceded by the grammar's close delimiter,
  as its own chunk (`~start`) and glued to the first chunk (`~start.glued`), means what the
  written input means with the option off (SPEC 5.2: after the first close, routing goes on
  as usual); where the written input starts with an open delimiter, the input less that
  open (`~start.opened`) means the same: the template gave the open;
- tool markers (`~markers`): the written case, or a form derived from it, whose content
  holds no marker means the same with them (SPEC 5.7);
- `sections: one` (`~one`): the written case, or a form derived from it, with no delimiter
  after its first block ends (by its close or a marker) means the same under one section;
  a `~start` form whose first block is the empty one its prefixed close ends has all its
  content after that close as text, delimiters included (SPEC 5.10);
- another grammar (`bracket`, `kimi`, `think_only`, a custom list): the delimiters of the
  default grammar in the input renamed to the target's (`~bracket`, `~custom`), a split
  point inside a delimiter kept at the same relative place; the channels are unchanged,
  since delimiters never reach them;
- harmony framing (`~harmony`): blocks renamed to analysis messages, each open to
  `<|channel|>analysis<|message|>` and each close to `<|end|>` (SPEC 5.8); not where an open
  falls inside a block, which under harmony begins a new message;
- the same grammars and harmony, input unchanged (`~text`): the default grammar's
  delimiters are plain text under a grammar that does not have them (SPEC 4.4).

The transforms compose, innermost first: start, markers, one section, then the grammar or
framing (`~start+one+think_only` for DeepSeek-R1's profile, SPEC 5.9).

Where a transform would change what the case means, no derived case stands in, and the
case's SKIP says why. `conformance check` proves every derived expectation against the
reference (_check.py), as it proves the written ones.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import cache, partial

from conformance.contracts.normalizer._spans import (
    between,
    rebuilt,
    rechunked,
    renamed_text,
    shifted,
    without_prefix,
)
from conformance.model.cases import Case, Derivation, Expectation
from conformance.model.chunks import Channels, Chunk
from conformance.model.families import FAMILIES
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


#: Derivations made, by (case object, options): `conformance check` and a run ask for the
#: same ones many times (each profile's derivation asks for its source profile's). The case
#: is kept with its forms, so that its id() cannot be reused while the entry lives.
_MADE: dict[tuple[int, Options], tuple[Case, list[Case] | str]] = {}
_MADE_SIZE = 8192


def derived_forms(case: Case, options: Options) -> list[Case] | str:
    """The cases standing in for `case` under `options` (the case itself where it has a
    written expectation), or why there are none."""
    key = (id(case), options)
    made = _MADE.get(key)
    if made is not None and made[0] is case:
        return made[1]
    forms = _derived_forms(case, options)
    if len(_MADE) >= _MADE_SIZE:
        _MADE.clear()
    _MADE[key] = (case, forms)
    return forms


def _derived_forms(case: Case, options: Options) -> list[Case] | str:
    if not isinstance(case.written_expectation(options), str):
        return [case]
    if options.framing != "tags" or options.delimiters not in ENUMERATED["delimiters"]:
        return _regrammared(case, options)
    if options.sections != "many":
        return _kept(case, options, replace(options, sections="many"), _one_section)
    if options.tool_markers:
        return _kept(case, options, replace(options, tool_markers=()), _unmarked)
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
    occurrences = source.grammar.occurrences(case.content or "")
    if occurrences and occurrences[0][0] == 0 and not occurrences[0][2]:
        # The prompt gave the open the written input starts with (SPEC 5.2).
        opened = without_prefix(case.chunks, occurrences[0][1])
        transform = "its opening delimiter left to the prompt"
        forms.append(_derived(case, "start.opened", transform, options, opened, written))
    return forms


def _kept(
    case: Case,
    options: Options,
    source: Options,
    reason: Callable[[Case, Options], str | Expectation | None],
) -> list[Case] | str:
    """The forms derived for `source` that mean the same under `options`, which differs from
    it in one option that changes the meaning of some inputs only; `reason` says why a form
    does not, or gives what it means instead."""
    label, transform = (
        ("one", "one section: nothing after its block")
        if options.sections != source.sections
        else ("markers", "no tool marker in it")
    )

    def kept(form: Case) -> Case | str:
        why = reason(form, options)
        if isinstance(why, str):
            return why
        expectation = form.expectation(source) if why is None else why
        assert not isinstance(expectation, str)
        return _derived(form, label, transform, options, form.chunks, expectation)

    made = _each_form(case, source, kept)
    if isinstance(made, str):
        return made
    forms, reasons = made
    return forms or "; ".join(dict.fromkeys(reasons))


def _each_form(
    case: Case, source: Options, make: Callable[[Case], Case | str]
) -> tuple[list[Case], list[str]] | str:
    """`make` of each form derived for `source`, the cases apart from the reasons why none
    was made; or why nothing derives for `source`."""
    inner = derived_forms(case, source)
    if isinstance(inner, str):
        return inner
    forms: list[Case] = []
    reasons: list[str] = []
    for form in inner:
        made = make(form)
        if isinstance(made, str):
            reasons.append(made)
        else:
            forms.append(made)
    return forms, reasons


def _unmarked(form: Case, options: Options) -> str | None:
    content = form.content or ""
    if options.grammar.marker.search(content):
        return "its text holds a tool marker"
    return None


def _one_section(form: Case, options: Options) -> str | Expectation | None:
    """Why `sections: one` reads `form` otherwise than several sections do: a delimiter
    after the end of its first block. Where that block is the empty one a `~start` form
    closes first, what follows is all text (SPEC 5.10), and that is its expectation."""
    grammar = options.grammar
    content = form.content or ""
    inside = options.start_in_reasoning
    ended: int | None = None
    for begin, end, close in grammar.occurrences(content):
        marker = close and grammar.is_marker(content[begin:end])
        if ended is not None and not marker:
            if ended != 0 or form.chunks[0].reasoning:
                return "it has a delimiter after its first block ends (text under one section)"
            rest = content[grammar.delimiter.match(content).end() :]  # type: ignore[union-attr]
            channels = Channels(assistant=rest, thinking=form.reasoning or "")
            return Expectation(channels, channels)
        if close and inside:
            ended = begin
        inside = not close or (inside and ended is None)
    return None


def _regrammared(case: Case, options: Options) -> list[Case] | str:
    source = replace(options, delimiters=SOURCE, framing="tags", profile=None)
    made = _each_form(case, source, lambda form: _renamed(form, source, options))
    if isinstance(made, str):
        return made
    forms, reasons = made
    if not options.start_in_reasoning:
        text = _as_text(case, source, options)
        (reasons if isinstance(text, str) else forms).append(text)  # type: ignore[arg-type]
    if forms:
        return forms
    return "; ".join(dict.fromkeys(reasons))


@cache
def proven_profiles() -> tuple[Options, ...]:
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
    # Each model-family profile, with each value of the options it leaves open; families
    # of equal values once (atomic delimiters change no expectation).
    families = {
        p.updated(
            {
                "profile": name,
                "native_with_tags": p.native_with_tags,
                "unclosed_at_end": p.unclosed_at_end,
                "atomic_delimiters": False,
            }
        ): None
        for name in FAMILIES
        for p in base
        if p.delimiters == SOURCE and p.matching == "exact"
    }
    return (*out, *families)


def grammar_label(options: Options) -> str:
    if options.framing != "tags":
        return options.framing
    return options.delimiters if isinstance(options.delimiters, str) else "custom"


def _renamed(form: Case, source: Options, target: Options) -> Case | str:
    """`form` with the source grammar's delimiters renamed to the target's."""
    expectation = form.expectation(source)
    if isinstance(expectation, str):
        return f"nothing to derive from: {expectation}"
    content = "".join(chunk.content or "" for chunk in form.chunks)
    names = _names(target)
    spans: list[tuple[int, int, str]] = []
    for match in source.grammar.delimiter.finditer(content):
        found = names.get(match.group())
        if found is None:
            return f"it depends on a tolerant spelling ({match.group()!r})"
        spans.append((match.start(), match.end(), found))
    if not spans:
        return "it has no delimiter of the default grammar to rename"
    rest = "".join(between(content, spans))
    renames = any(new != content[start:end] for start, end, new in spans)
    if renames and _NEAR_MISS.search(rest):
        return "it depends on the default names themselves (text like `<th` next to them)"
    renamed = rebuilt(content, spans)
    kept = [(start, end) for start, end, _ in shifted(spans)]
    seen = [m.span() for m in target.block_grammar.delimiter.finditer(renamed)]
    if seen != kept or target.grammar.marker.search(renamed):
        return "its text would collide with the target grammar's delimiters"
    if target.framing == "harmony":
        if target.grammar.delimiter.search(rest):
            return "its text holds harmony tokens"
        if _nested(source, content):
            return "an open inside a block begins a new message under harmony"
    chunks = rechunked(form.chunks, spans, renamed)
    # Under one section, delimiters after the block are text of a channel: renamed too.
    channels = [expectation.stream, expectation.whole]
    for index, text in enumerate(channels):
        # Only content reaches the assistant channel; native reasoning is never renamed.
        left = source.grammar.delimiter.findall(text.assistant)
        if any(name not in names for name in left):
            return "its expected text holds a tolerant spelling of a delimiter"
        if left:
            rename = partial(renamed_text, source.grammar.delimiter, names)
            channels[index] = Channels(rename(text.assistant), text.thinking)
    expectation = Expectation(channels[0], channels[1])
    label = grammar_label(target)
    transform = f"delimiters renamed to the {label} grammar's"
    if form.derived is not None:
        transform = f"{form.derived.transform}; {transform}"
    return _derived(form, label, transform, target, chunks, expectation)


def _names(target: Options) -> dict[str, str]:
    """Each delimiter of the source grammar and its new name in the target's (the target's
    last pair standing in for source pairs it has no counterpart of)."""
    pairs = target.pairs
    return {
        delimiter: pairs[min(index, len(pairs) - 1)][kind]
        for index, pair in enumerate(PRESETS[SOURCE])
        for kind, delimiter in enumerate(pair)
    }


def _nested(options: Options, content: str) -> bool:
    """Whether an open delimiter of `content` falls inside a block."""
    inside = options.start_in_reasoning
    for _, _, close in options.grammar.occurrences(content):
        if not close and inside:
            return True
        inside = not close
    return False


def _as_text(case: Case, source: Options, target: Options) -> Case | str:
    """`case` unchanged, where the target grammar finds no delimiter in it: all its content
    is text (SPEC 4.4), the default grammar's delimiters included."""
    written = derived_forms(case, source)
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
