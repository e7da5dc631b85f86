"""Cases as plain data: what every case has (`CaseIdentity`, the one case type the engine
sees), the normalizer's cases with their expectations and variants, the cases of other
contracts, and problems found in case files. Loading them is `conformance.corpus.cases`;
each case's contract (`conformance.contracts`) plans and judges it."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.model.chunks import Channels, Chunk
from conformance.model.options import ENUMERATED, OPTION_NAMES, Options, expanded

#: Why a case `conformance approve` wrote is not judged yet (SKIP) until it is accepted.
PENDING_REVIEW = (
    "pending review: an unreviewed capture; check its expected split, then accept it with "
    "`conformance approve --accept CASSETTE` (docs/cassettes.md)"
)


@dataclass(frozen=True, slots=True)
class Expectation:
    """What a case expects under one set of options, for streams and for the whole form."""

    stream: Channels
    whole: Channels
    #: The `when` of the variant it came from; empty for the default expectation.
    when: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Derivation:
    """Where a derived case comes from (conformance/contracts/normalizer/_derive.py): a
    written case, the transform applied to its input and expectation, and the one profile
    it holds for."""

    source: str
    transform: str
    options: Options

    def to_json(self) -> dict[str, str]:
        return {"from": self.source, "transform": self.transform}


def written_id(case: str) -> str:
    """The written case a case ID comes from: a derived case's ID is `WRITTEN~transforms`
    (`K7QF~start+one` -> `K7QF`); a written case's is itself."""
    return case.partition("~")[0]


@dataclass(frozen=True, slots=True)
class Variant:
    when: Mapping[str, Any]
    expected: Channels | None
    whole: Channels | None
    undefined: str | None
    note: str | None
    line: int

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"when": dict(self.when)}
        if self.expected is not None:
            data["expected"] = self.expected.to_json()
        if self.whole is not None:
            data["whole"] = self.whole.to_json()
        if self.undefined is not None:
            data["undefined"] = self.undefined
        return data


@dataclass(frozen=True, slots=True)
class Provenance:
    kind: str
    ref: str
    test: str | None = None

    def __str__(self) -> str:
        return f"{self.kind}: {self.ref}" + (f" ({self.test})" if self.test else "")


@dataclass(frozen=True, slots=True)
class CassetteRef:
    """Where a cassette-backed case's chunks come from (docs/cassettes.md)."""

    #: As written in the case file, relative to the cassettes directory.
    name: str
    path: Path
    interaction: int = 0
    #: The wire family named in the case; None: detected from the recording.
    family: str | None = None


#: The contract of case files without a `contract:` key.
NORMALIZER = "normalizer"


@dataclass(frozen=True, slots=True, kw_only=True)
class CaseIdentity:
    """What every case has, whatever its contract: who it is, what it covers, where it is,
    and the contract (conformance.contracts) that plans and judges it. The engine sees
    cases only as this; each contract knows its own subclass."""

    contract: str
    id: str
    slug: str
    title: str
    taxonomy: str
    level: str
    category: str
    provenance: tuple[Provenance, ...]
    note: str | None
    file: Path
    line: int
    #: The upstream test file, issue or pull request the case comes from
    #: (`ollama/ollama harmony/harmonyparser_test.go`, `ollama/ollama#18044`), where one does.
    source: str | None = None
    #: The cassette the case's input was decoded from, if any.
    cassette: CassetteRef | None = None
    #: An unreviewed capture: every check is SKIP until it is accepted.
    pending: bool = False
    #: Set on a case derived from a written one for an opt-in profile (SPEC 5.6).
    derived: Derivation | None = None
    #: Derived forms asked for by ID (`--id K7QF~start.glued`); empty: all of them.
    only: tuple[str, ...] = ()

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"

    def to_json(self) -> dict[str, Any]:
        """The case as `conformance dump` shows it, in its contract's shape."""
        raise NotImplementedError

    def _provenance_json(self) -> dict[str, Any]:
        """The case's `provenance` list, and its `source` where it has one."""
        data: dict[str, Any] = {
            "provenance": [
                {"kind": p.kind, "ref": p.ref, **({"test": p.test} if p.test else {})}
                for p in self.provenance
            ]
        }
        if self.source is not None:
            data["source"] = self.source
        return data


@dataclass(frozen=True, slots=True, kw_only=True)
class Case(CaseIdentity):
    """A normalizer case. A derived one (`derived` set) holds under `derived.options` only."""

    contract: str = NORMALIZER
    chunks: tuple[Chunk, ...]
    expected: Channels
    whole: Channels | None
    variants: tuple[Variant, ...]
    #: Why no derived case stands in for this one under the profile asked (added to SKIP).
    not_derived: str | None = None

    @property
    def content(self) -> str | None:
        """The whole-message content: every chunk's content joined (None if none had any)."""
        parts = [c.content for c in self.chunks if c.content is not None]
        return "".join(parts) if parts else None

    @property
    def reasoning(self) -> str | None:
        """The whole-message reasoning: every chunk's reasoning joined (None if none had any)."""
        parts = [c.reasoning for c in self.chunks if c.reasoning]
        return "".join(parts) if parts else None

    def expectation(self, options: Options) -> Expectation | str:
        """The expectation under `options`, or the reason there is none (a SKIP)."""
        if self.pending:
            return PENDING_REVIEW
        if self.derived is not None:
            if options != self.derived.options:
                return f"derived for {json.dumps(self.derived.options.differences())} only"
            return Expectation(self.expected, self.whole or self.expected)
        found = self.written_expectation(options)
        if isinstance(found, str) and self.not_derived:
            return f"{found}; not derived: {self.not_derived}"
        return found

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": self.id,
            "slug": self.slug,
            "title": self.title,
            "category": self.category,
            "taxonomy": self.taxonomy,
            "level": self.level,
            "chunks": [chunk.to_json() for chunk in self.chunks],
            "expected": self.expected.to_json(),
        }
        if self.whole is not None:
            data["whole"] = self.whole.to_json()
        if self.variants:
            data["variants"] = [variant.to_json() for variant in self.variants]
        data.update(self._provenance_json())
        return data

    def written_expectation(self, options: Options) -> Expectation | str:
        """The expectation the case file gives under `options`, or why there is none."""
        values = {name: getattr(options, name) for name in OPTION_NAMES}
        opt_in = [name for name in OPTION_NAMES if values[name] not in ENUMERATED[name]]
        best: Variant | None = None
        best_rank = (-1, -1)
        best_when: Mapping[str, Any] = {}
        for variant in self.variants:
            when = expanded(variant.when)
            if all(values[name] == value for name, value in when.items()):
                # A variant naming the opt-in values in force outranks one that does not,
                # then the most specific wins; ties go to the first written.
                rank = (sum(name in when for name in opt_in), len(when))
                if rank > best_rank:
                    best, best_rank, best_when = variant, rank, when
        missing = [name for name in opt_in if best is None or name not in best_when]
        if missing:
            shown = options.to_json()
            named = ", ".join(
                f"{name}={json.dumps(shown[name], ensure_ascii=False)}" for name in missing
            )
            return f"no expectation for {named}"
        if best is None:
            return Expectation(self.expected, self.whole or self.expected)
        if best.undefined is not None:
            return best.undefined
        assert best.expected is not None  # the schema requires expected or undefined
        return Expectation(best.expected, best.whole or best.expected, best.when)


@dataclass(frozen=True, slots=True, kw_only=True)
class ContractCase(CaseIdentity):
    """A case of another contract (docs/contracts.md): its input and expected output are
    that contract's own shapes, which its module interprets. Written inline: never decoded
    from a cassette, never pending."""

    input: Mapping[str, Any]
    expected: Mapping[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "slug": self.slug,
            "title": self.title,
            "category": self.category,
            "contract": self.contract,
            "taxonomy": self.taxonomy,
            "level": self.level,
            "input": dict(self.input),
            "expected": dict(self.expected),
            **self._provenance_json(),
        }


@dataclass(frozen=True, slots=True)
class CaseFileProblem:
    """A problem in a case file, at a line (1-based; 0 when the file as a whole): a record
    collected while loading and checking, never raised; the command that meets one exits 2."""

    file: Path
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}"


@dataclass(frozen=True, slots=True)
class Corpus:
    cases: tuple[CaseIdentity, ...]
    errors: tuple[CaseFileProblem, ...]
    files: tuple[Path, ...]
