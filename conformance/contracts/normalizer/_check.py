"""`conformance check` of a normalizer case: conservation of every expectation, and
agreement with the reference under every option profile the case's expectations must hold
for, derived expectations included. Also what `casegen` asks of the reference."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator, Mapping
from typing import Any

from conformance.contracts.normalizer._derive import derived_forms, proven_profiles
from conformance.model.cases import Case, CaseFileProblem, Expectation
from conformance.model.chunks import Channels
from conformance.model.conservation import kept_text, may_drop, unaccounted
from conformance.model.options import (
    DEFAULT,
    ENUMERATED,
    Options,
    OptionsError,
    enumerated_profiles,
    expanded,
)
from conformance.reference import join, normalize_stream, normalize_whole


def check_case(case: Case, *, suggest: bool) -> Iterator[CaseFileProblem]:
    """Every problem of the case against the spec's reference and conservation."""
    yield from _conservation(case)
    yield from _agreement(case, suggest=suggest)
    yield from _derived_agreement(case)


def _expectations(case: Case) -> Iterator[tuple[Options, Expectation, int]]:
    """Each explicit expectation of a case with the options it was written for."""
    yield DEFAULT, Expectation(case.expected, case.whole or case.expected), case.line
    for variant in case.variants:
        if variant.expected is not None:
            whole = variant.whole or variant.expected
            yield DEFAULT.updated(variant.when), Expectation(variant.expected, whole), variant.line


def _conservation(case: Case) -> Iterator[CaseFileProblem]:
    """The expected channels plus the removed delimiters account for every input character."""
    for options, expectation, line in _expectations(case):
        for form, channels, content, reasoning in (
            ("stream", expectation.stream, _joined(case, "content"), _joined(case, "reasoning")),
            ("whole", expectation.whole, case.content or "", case.reasoning or ""),
        ):
            kept = kept_text(options, content)
            problem = unaccounted(kept, reasoning, channels, may_drop(options, reasoning))
            if problem:
                label = _label(options)
                yield CaseFileProblem(
                    case.file,
                    line,
                    f"{case.id}: conservation fails for the {form} expectation{label}: {problem}",
                )
            if expectation.whole is expectation.stream:
                break


def _joined(case: Case, name: str) -> str:
    return "".join(getattr(chunk, name) or "" for chunk in case.chunks)


def profiles_for(case: Case) -> list[Options]:
    """The option profiles a case's expectations must hold under: every enumerated
    combination, and each opt-in value a variant names combined with all of those."""
    base = list(enumerated_profiles())
    # Values as Options holds them: hashable, a custom delimiters list included.
    opt_in = {
        (name, value)
        for variant in case.variants
        for name, value in expanded(variant.when).items()
        if value not in ENUMERATED[name]
    }
    out = dict.fromkeys(base)
    for size in range(1, len(opt_in) + 1):
        for combo in itertools.combinations(sorted(opt_in, key=repr), size):
            if len({name for name, _ in combo}) == size:
                out.update(dict.fromkeys(_combined(base, dict(combo))))
    return list(out)


def _combined(base: list[Options], values: dict[str, object]) -> Iterator[Options]:
    for options in base:
        try:
            yield options.updated(values)
        except OptionsError:
            continue  # values that cannot go together (harmony framing with tool markers)


def reference_output(case: Case, options: Options) -> tuple[Channels, Channels]:
    """The reference's (stream, whole) channels for a case under options."""
    stream = join(normalize_stream((c.to_json() for c in case.chunks), options))
    whole = normalize_whole(case.content, case.reasoning, options)
    return Channels(**stream), Channels(**whole)


def _agreement(case: Case, *, suggest: bool) -> Iterator[CaseFileProblem]:
    reported: set[tuple[int, str]] = set()
    for options in profiles_for(case):
        expectation = case.expectation(options)
        if isinstance(expectation, str):
            continue
        stream, whole = reference_output(case, options)
        if (stream, whole) == (expectation.stream, expectation.whole):
            continue
        minimal = minimal_when(case, options, (stream, whole))
        line = next((v.line for v in case.variants if v.when == expectation.when), case.line)
        key = (line, repr(sorted(minimal.items())))
        if key in reported:
            continue
        reported.add(key)
        source = f"variant when {dict(expectation.when)}" if expectation.when else "default"
        wrong = []
        if stream != expectation.stream:
            wrong.append(
                f"stream gives {stream.to_json()}, expected {expectation.stream.to_json()}"
            )
        if whole != expectation.whole:
            wrong.append(f"whole gives {whole.to_json()}, expected {expectation.whole.to_json()}")
        message = (
            f"{case.id}: under {_describe(minimal)} the reference disagrees with the "
            f"{source} expectation: {'; '.join(wrong)}. Fix the expectation, or add a "
            "variant for these options"
        )
        if suggest:
            message += "\n" + _variant_yaml(minimal, stream, whole)
        yield CaseFileProblem(case.file, line, message)


def _derived_agreement(case: Case) -> Iterator[CaseFileProblem]:
    """Every derived expectation (SPEC 5.6) holds for the reference under the profile it was
    derived for. A disagreement is an error in the case, the derivation or the reference."""
    if case.pending:
        return
    reported: set[str] = set()
    for options in proven_profiles():
        forms = derived_forms(case, options)
        for form in forms if not isinstance(forms, str) else ():
            if form.derived is None or form.id in reported:
                continue
            expectation = form.expectation(options)
            assert not isinstance(expectation, str)
            stream, whole = reference_output(form, options)
            if (stream, whole) == (expectation.stream, expectation.whole):
                continue
            reported.add(form.id)
            yield CaseFileProblem(
                case.file,
                case.line,
                f"{case.id}: derived case {form.id} ({form.derived.transform}) under "
                f"{_describe(options.differences())}: the reference gives stream "
                f"{stream.to_json()}, whole {whole.to_json()}; derived expectation "
                f"{expectation.stream.to_json()}, whole {expectation.whole.to_json()}. "
                "Add a variant for these options, or fix the reference",
            )


def minimal_when(
    case: Case,
    options: Options,
    output: tuple[Channels, Channels],
    within: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The smallest set of option values, from those where `options` differs from the
    default, under which the reference gives the same output. With `within` (the `when` of
    the variant selected now), only sets that hold more than it: a variant with such a
    `when` outranks the selected one (section 5.5), where a smaller one might not."""
    differences = options.differences()
    base = dict(within or {})
    names = [name for name in differences if name not in base]
    for size in range(0 if not base else 1, len(names) + 1):
        for subset in itertools.combinations(names, size):
            when = {**base, **{name: differences[name] for name in subset}}
            if reference_output(case, DEFAULT.updated(when)) == output:
                return when
    return differences


def _variant_yaml(when: Mapping[str, Any], stream: Channels, whole: Channels) -> str:
    # JSON is YAML whose strings are double-quoted with escapes, as case files want them.
    lines = [f"- when: {json.dumps(dict(when))}", f"  expected: {json.dumps(stream.to_json())}"]
    if whole != stream:
        lines.append(f"  whole: {json.dumps(whole.to_json())}")
    return "  suggested variant:\n" + "".join(f"      {line}\n" for line in lines)


def _describe(when: Mapping[str, Any]) -> str:
    return (
        "the default options"
        if not when
        else "options " + ", ".join(f"{name}={value}" for name, value in when.items())
    )


def _label(options: Options) -> str:
    differences = options.differences()
    return f" ({_describe(differences)})" if differences else ""
