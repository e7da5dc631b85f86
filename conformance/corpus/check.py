"""`conformance check`: the corpus checks itself.

Schema, IDs, taxonomy, conservation, and agreement with the reference normalizer under every
option profile a case's expectations must hold for.
"""

from __future__ import annotations

import itertools
import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from conformance.corpus.cases import (
    Case,
    CaseFileError,
    CaseIdentity,
    ContractCase,
    Corpus,
    Expectation,
)
from conformance.corpus.derive import derived_forms, proven_profiles
from conformance.model.chunks import Channels
from conformance.model.options import (
    DEFAULT,
    ENUMERATED,
    Options,
    enumerated_profiles,
    normalized,
)
from conformance.reference import join, normalize_stream, normalize_whole


@dataclass(frozen=True, slots=True)
class Taxonomy:
    entries: Mapping[str, Mapping[str, str]]
    file: Path | None


def load_taxonomy(directory: Path) -> Taxonomy | CaseFileError:
    path = directory / "taxonomy.yaml"
    try:
        data = yaml.safe_load(path.read_text("utf-8"))
    except (OSError, yaml.YAMLError) as error:
        return CaseFileError(path, 0, f"cannot load the taxonomy: {error}")
    if not isinstance(data, dict) or not isinstance(data.get("entries"), dict):
        return CaseFileError(
            path, 1, "the taxonomy needs a mapping `entries:` of ID -> {section, title}"
        )
    return Taxonomy(data["entries"], path)


def load_retired(directory: Path) -> set[str]:
    path = directory / "retired-ids.txt"
    if not path.exists():
        return set()
    lines = path.read_text("utf-8").splitlines()
    return {line.split()[0] for line in lines if line.strip() and not line.startswith("#")}


def check_corpus(
    corpus: Corpus,
    taxonomy: Taxonomy,
    retired: set[str],
    *,
    suggest: bool = False,
    coverage: bool = True,
) -> list[CaseFileError]:
    """Every problem found, in file order. The corpus is good when the list is empty.

    `coverage`: also require a case for every taxonomy entry (for the taxonomy's own corpus,
    not for a few extra cases checked against it)."""
    problems = list(corpus.errors)
    problems += _cassette_secrets(corpus)
    problems += _identities(corpus.cases, retired)
    problems += _taxonomy(corpus.cases, taxonomy, coverage=coverage)
    for case in corpus.cases:
        if isinstance(case, ContractCase):
            problems += _contract_agreement(case)
            continue
        problems += _conservation(case)
        problems += _agreement(case, suggest=suggest)
        problems += _derived_agreement(case)
    return sorted(problems, key=lambda p: (str(p.file), p.line))


def _cassette_secrets(corpus: Corpus) -> Iterator[CaseFileError]:
    """A credential in any cassette of the corpus (docs/cassettes.md, scrubbing)."""
    from conformance.cassettes._secrets import corpus_cassettes, problems

    used = [case.cassette.path for case in corpus.cases if case.cassette is not None]
    for path in corpus_cassettes(corpus.files, used):
        for line, message in problems(path):
            yield CaseFileError(path, line, message)


def _identities(cases: Iterable[CaseIdentity], retired: set[str]) -> Iterator[CaseFileError]:
    first_id: dict[str, CaseIdentity] = {}
    first_slug: dict[str, CaseIdentity] = {}
    for case in cases:
        if case.id in retired:
            yield CaseFileError(
                case.file,
                case.line,
                f"case ID {case.id} is retired "
                "(cases/retired-ids.txt); IDs are never reused: pick a new one",
            )
        for seen, key, what in ((first_id, case.id, "ID"), (first_slug, case.slug, "slug")):
            if key in seen:
                yield CaseFileError(
                    case.file,
                    case.line,
                    f"duplicate case {what} {key!r}, first used at {seen[key].where}",
                )
            else:
                seen[key] = case


def _taxonomy(
    cases: Iterable[CaseIdentity], taxonomy: Taxonomy, *, coverage: bool
) -> Iterator[CaseFileError]:
    covered: set[str] = set()
    for case in cases:
        covered.add(case.taxonomy)
        if case.taxonomy not in taxonomy.entries:
            yield CaseFileError(
                case.file,
                case.line,
                f"unknown taxonomy entry {case.taxonomy!r}; the entries are in {taxonomy.file}",
            )
    if coverage and taxonomy.file is not None:
        lines = taxonomy.file.read_text("utf-8").splitlines()
        for entry in sorted(set(taxonomy.entries) - covered):
            line = next(
                (n for n, text in enumerate(lines, 1) if text.strip().startswith(f"{entry}:")), 0
            )
            yield CaseFileError(
                taxonomy.file,
                line,
                f"taxonomy entry {entry} has no case: "
                "add one, or remove the entry if nothing can show it",
            )


def _contract_agreement(case: ContractCase) -> Iterator[CaseFileError]:
    """A case of another contract must pass its checks against that contract's reference."""
    from conformance.contracts import op_contract

    module = op_contract(case.contract)
    for check in module.CHECKS:
        payloads = module.requests(case.input, check)
        if not payloads:
            continue
        replies = [module.reference(payload) for payload in payloads]
        verdict, reason, _ = module.judge(case.input, case.expected, check, replies)
        if verdict != "PASS":
            yield CaseFileError(
                case.file,
                case.line,
                f"{case.id}: the {case.contract} reference fails check {check}: {reason}",
            )


def _expectations(case: Case) -> Iterator[tuple[Options, Expectation, int]]:
    """Each explicit expectation of a case with the options it was written for."""
    yield DEFAULT, Expectation(case.expected, case.whole or case.expected), case.line
    for variant in case.variants:
        if variant.expected is not None:
            whole = variant.whole or variant.expected
            yield DEFAULT.updated(variant.when), Expectation(variant.expected, whole), variant.line


def _conservation(case: Case) -> Iterator[CaseFileError]:
    """The expected channels plus the removed delimiters account for every input character."""
    for options, expectation, line in _expectations(case):
        grammar = options.grammar
        for form, channels, content, reasoning in (
            ("stream", expectation.stream, _joined(case, "content"), _joined(case, "reasoning")),
            ("whole", expectation.whole, case.content or "", case.reasoning or ""),
        ):
            kept = grammar.delimiter.sub("", content)
            problem = unaccounted(kept, reasoning, channels, _may_drop(options, reasoning))
            if problem:
                label = _label(options)
                yield CaseFileError(
                    case.file,
                    line,
                    f"{case.id}: conservation fails for the {form} expectation{label}: {problem}",
                )
            if expectation.whole is expectation.stream:
                break


def _joined(case: Case, name: str) -> str:
    return "".join(getattr(chunk, name) or "" for chunk in case.chunks)


def _may_drop(options: Options, reasoning: str) -> bool:
    return options.unclosed_at_end == "drop" or (
        options.native_with_tags == "native_only" and bool(reasoning)
    )


def unaccounted(
    kept: str,
    native: str,
    channels: Channels,
    may_drop: bool,
    delimiter: re.Pattern[str] | None = None,
) -> str | None:
    if not _is_subsequence(channels.assistant, kept):
        return "the assistant text is not the content, in order, less delimiters and thinking"
    if not _is_subsequence(native, channels.thinking):
        return "the thinking text does not hold the native reasoning, in order"
    have = Counter(kept) + Counter(native)
    out = Counter(channels.assistant) + Counter(channels.thinking)
    invented = out - have
    if invented:
        # A delimiter left in a channel is input text, not invented text: say which it is.
        left = delimiter.findall(channels.assistant + "\0" + channels.thinking) if delimiter else []
        if left and not invented - Counter("".join(left)):
            return f"delimiters left in a channel (a delimiter is not text): {', '.join(left)}"
        return f"characters that are not in the input: {''.join(sorted(invented.elements()))!r}"
    lost = have - out
    if lost and not may_drop:
        return (
            f"input characters in neither channel: {''.join(sorted(lost.elements()))!r} "
            "(no option in force drops text)"
        )
    return None


def _is_subsequence(needle: str, haystack: str) -> bool:
    it = iter(haystack)
    return all(char in it for char in needle)


def profiles_for(case: Case) -> list[Options]:
    """The option profiles a case's expectations must hold under: every enumerated
    combination, and each opt-in value a variant names combined with all of those."""
    base = list(enumerated_profiles())
    # Values as Options holds them: hashable, a custom delimiters list included.
    opt_in = {
        (name, normalized(name, value))
        for variant in case.variants
        for name, value in variant.when.items()
        if normalized(name, value) not in ENUMERATED[name]
    }
    out = dict.fromkeys(base)
    for size in range(1, len(opt_in) + 1):
        for combo in itertools.combinations(sorted(opt_in, key=repr), size):
            if len({name for name, _ in combo}) == size:
                out.update(dict.fromkeys(p.updated(dict(combo)) for p in base))
    return list(out)


def reference_output(case: Case, options: Options) -> tuple[Channels, Channels]:
    """The reference's (stream, whole) channels for a case under options."""
    stream = join(normalize_stream((c.to_json() for c in case.chunks), options))
    whole = normalize_whole(case.content, case.reasoning, options)
    return Channels(**stream), Channels(**whole)


def _agreement(case: Case, *, suggest: bool) -> Iterator[CaseFileError]:
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
        yield CaseFileError(case.file, line, message)


def _derived_agreement(case: Case) -> Iterator[CaseFileError]:
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
            yield CaseFileError(
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
