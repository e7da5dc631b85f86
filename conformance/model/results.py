"""Results: verdicts, one result per (implementation, case, check), and the run they form.

Plain data only. The runner produces these; every report reads them; neither knows the other.
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from conformance.model.clipping import clip_with_digest


class Verdict(enum.StrEnum):
    PASS = "PASS"
    NON_STRICT = "NON_STRICT"
    FAIL = "FAIL"
    ERROR = "ERROR"
    TIMEOUT = "TIMEOUT"
    SKIP = "SKIP"
    XFAIL = "XFAIL"
    XPASS = "XPASS"

    @property
    def ok(self) -> bool:
        """Whether this verdict leaves the run green (exit status 0)."""
        return self in _OK


_OK = {Verdict.PASS, Verdict.NON_STRICT, Verdict.SKIP, Verdict.XFAIL}
#: Worst first: combining verdicts of several runs of one check keeps the worst.
SEVERITY = (
    Verdict.ERROR,
    Verdict.TIMEOUT,
    Verdict.FAIL,
    Verdict.XPASS,
    Verdict.NON_STRICT,
    Verdict.XFAIL,
    Verdict.SKIP,
    Verdict.PASS,
)


def worst(verdicts: Iterable[Verdict]) -> Verdict:
    return min(verdicts, key=SEVERITY.index, default=Verdict.PASS)


#: Requirement levels of cases, most severe first (case-file.schema.json).
LEVELS = ("must", "should", "info")


@dataclass(frozen=True, slots=True)
class CaseResult:
    """The verdict of one check of one case on one implementation.

    For anything but PASS it carries what a reader needs to see the problem: the input the
    failing run used, the expected and actual channels, and a one-line reason.
    """

    case: str
    slug: str
    category: str
    taxonomy: str
    level: str
    check: str
    verdict: Verdict
    reason: str = ""
    chunks: list[dict[str, str | None]] | None = None
    expected: Mapping[str, str] | None = None
    actual: Mapping[str, str] | None = None
    #: Most characters held back beyond what the spec allows, at any step (stream checks).
    holdback: int | None = None
    #: Stderr tail of the implementation for ERROR and TIMEOUT.
    stderr: str | None = None
    #: The expectation-file entry behind an XFAIL or XPASS.
    expectation: Mapping[str, str] | None = None
    #: The case's one-line title, so reports can say what a case is about without the corpus.
    title: str = ""
    #: For each text kept only in part (its start and end; see engine/excerpts.py), the whole
    #: text's length and SHA-256, so a long reply is still identified exactly.
    digests: Mapping[str, Mapping[str, Any]] | None = None
    #: For a derived case (SPEC 5.6): the written case it comes from and the transform,
    #: `{"from": ID, "transform": text}`.
    derived: Mapping[str, str] | None = None
    #: For the growth check (SPEC 14): the lengths, median times and fitted exponent.
    growth: Mapping[str, Any] | None = None
    #: True when every request of the check that failed cut inside a delimiter, the others
    #: passing (a `splits` check under options without atomic delimiters, SPEC.md 5.11).
    cut_only: bool | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "case": self.case,
            "slug": self.slug,
            "category": self.category,
            "taxonomy": self.taxonomy,
            "level": self.level,
            "check": self.check,
            "verdict": self.verdict.value,
        }
        for name in (
            "title",
            "reason",
            "chunks",
            "expected",
            "actual",
            "holdback",
            "stderr",
            "expectation",
            "digests",
            "derived",
            "growth",
            "cut_only",
        ):
            value = getattr(self, name)
            if value not in (None, ""):
                data[name] = value
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CaseResult:
        return cls(**{**data, "verdict": Verdict(data["verdict"])})


#: Characters kept from the start and from the end of an implementation's name, version and
#: language.
KEEP_METADATA = 100


@dataclass(frozen=True, slots=True)
class ImplementationInfo:
    """Who an implementation says it is, and the policy it runs under."""

    label: str
    name: str
    version: str
    language: str
    options: Mapping[str, Any]
    spec: str

    def __post_init__(self) -> None:
        # Declared by the implementation, so of any size: every report repeats them.
        for name in ("name", "version", "language"):
            value = getattr(self, name)
            object.__setattr__(self, name, clip_with_digest(value, KEEP_METADATA))

    @property
    def series(self) -> str:
        """The label without the release it names: `conformance env` labels one release's
        environment `vercel-ai@6.0.0`, and runs of each release are points of one series,
        compared with each other by `conformance diff` and on the site's history."""
        return self.label.removesuffix(f"@{self.version}") if self.version else self.label

    def to_json(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "name": self.name,
            "version": self.version,
            "language": self.language,
            "options": dict(self.options),
            "spec": self.spec,
        }


@dataclass(frozen=True, slots=True)
class FuzzResult:
    """The verdict of one fuzzing property on one implementation.

    A failure carries the shrunk counterexample (`chunks`, `reason`, and the `expected` and
    `actual` channels where they exist) and the case file written for it.
    """

    property: str
    verdict: Verdict
    examples: int
    seconds: float
    seed: int
    reason: str = ""
    counterexample: Mapping[str, Any] | None = None
    case_file: str | None = None
    #: The bug signature of a failure (`<bug class>/<input category>`): one result per
    #: distinct bug a property found; a bug another property found too is reported once.
    bug: str | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "property": self.property,
            "verdict": self.verdict.value,
            "examples": self.examples,
            "seconds": round(self.seconds, 3),
            "seed": self.seed,
        }
        for name in ("reason", "counterexample", "case_file", "bug"):
            if getattr(self, name):
                data[name] = getattr(self, name)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> FuzzResult:
        return cls(**{**data, "verdict": Verdict(data["verdict"])})


@dataclass(slots=True)
class ImplementationRun:
    """All results of one implementation in one run."""

    info: ImplementationInfo
    results: list[CaseResult] = field(default_factory=list)
    #: Set when the implementation could not be started or spoken to at all.
    failure: str | None = None
    #: Fuzzing properties, when the run fuzzed.
    fuzz: list[FuzzResult] = field(default_factory=list)
    #: Selected checks (or properties) never run, because the session stopped early.
    not_run: int = 0
    #: Set when the implementation judged too little of what applied to it (see
    #: engine/coverage.py): what went unjudged and why. The run fails.
    unjudged: str | None = None
    #: Seconds from launching the implementation to its answering `hello` (for `python:`,
    #: importing it and making a first normalizer); None where it was not started here.
    start_seconds: float | None = None
    #: What a behaviour fingerprint found (`conformance matrix` fingerprints each
    #: implementation): option -> {"follows": the value as display text, "agrees": whether it
    #: is the declared one}; None where none was made.
    fingerprint: Mapping[str, Mapping[str, Any]] | None = None

    @property
    def summary(self) -> dict[str, int]:
        counts = Counter(result.verdict for result in self.results)
        return {verdict.value: counts.get(verdict, 0) for verdict in Verdict}

    @property
    def ok(self) -> bool:
        return (
            self.failure is None
            and self.not_run == 0
            and self.unjudged is None
            and all(result.verdict.ok for result in self.results)
            and all(result.verdict.ok for result in self.fuzz)
        )


@dataclass(slots=True)
class Run:
    """One run of the suite: several implementations over one selection of cases."""

    harness_version: str
    spec_version: str
    started: str
    implementations: list[ImplementationRun]
    selection: Mapping[str, Any] = field(default_factory=dict)
    duration: float = 0.0
    #: Why the session stopped before running everything (a signal, the time budget).
    stopped: str | None = None
    #: Run-level problems: case files that failed to load, implementations that judged nothing.
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return (
            self.stopped is None
            and not self.problems
            and all(run.ok for run in self.implementations)
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "harness_version": self.harness_version,
            "spec_version": self.spec_version,
            "started": self.started,
            "duration": round(self.duration, 3),
            "selection": dict(self.selection),
            "implementations": [
                {
                    **run.info.to_json(),
                    "failure": run.failure,
                    "summary": run.summary,
                    "results": [result.to_json() for result in run.results],
                    **({"fuzz": [result.to_json() for result in run.fuzz]} if run.fuzz else {}),
                    **({"not_run": run.not_run} if run.not_run else {}),
                    **({"unjudged": run.unjudged} if run.unjudged else {}),
                    **(
                        {"start_seconds": round(run.start_seconds, 3)}
                        if run.start_seconds is not None
                        else {}
                    ),
                    **(
                        {"fingerprint": dict(run.fingerprint)}
                        if run.fingerprint is not None
                        else {}
                    ),
                }
                for run in self.implementations
            ],
            **({"stopped": self.stopped} if self.stopped else {}),
            **({"problems": list(self.problems)} if self.problems else {}),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Run:
        implementations = []
        for entry in data["implementations"]:
            info = ImplementationInfo(
                **{k: entry[k] for k in ("label", "name", "version", "language", "options", "spec")}
            )
            results = [CaseResult.from_json(r) for r in entry["results"]]
            fuzz = [FuzzResult.from_json(r) for r in entry.get("fuzz", ())]
            implementations.append(
                ImplementationRun(
                    info,
                    results,
                    entry.get("failure"),
                    fuzz,
                    entry.get("not_run", 0),
                    entry.get("unjudged"),
                    entry.get("start_seconds"),
                    entry.get("fingerprint"),
                )
            )
        return cls(
            harness_version=data["harness_version"],
            spec_version=data["spec_version"],
            started=data["started"],
            implementations=implementations,
            selection=data.get("selection", {}),
            duration=data.get("duration", 0.0),
            stopped=data.get("stopped"),
            problems=list(data.get("problems", ())),
        )
