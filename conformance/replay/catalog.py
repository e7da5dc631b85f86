"""The cassettes `conformance serve` answers from, each with the cases that use it."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.cassettes._decode import decode_interaction
from conformance.cassettes._load import Cassette, iter_cassette_files, load_cassette
from conformance.cassettes._model import CassetteError, Interaction
from conformance.cassettes._secrets import refusal
from conformance.contracts.normalizer import own_cases
from conformance.model.cases import Case, CaseIdentity
from conformance.model.options import Options


@dataclass(slots=True)
class Served:
    """One cassette the server answers from."""

    name: str
    cassette: Cassette
    cases: list[Case] = field(default_factory=list)
    forms: list[str] = field(default_factory=list)
    families: list[str] = field(default_factory=list)

    def manifest(self, base: str) -> dict[str, Any]:
        return {
            "cassette": self.name,
            "base_url": f"{base}/{self.name}",
            "requests": [
                {
                    "method": i.method,
                    "path": i.path,
                    "family": self.families[i.index],
                    "form": self.forms[i.index],
                }
                for i in self.cassette.interactions
            ],
            "cases": [
                {"id": c.id, "slug": c.slug, "pending": c.pending, "expected": _expected(c)}
                for c in self.cases
            ],
        }


def _expected(case: Case) -> dict[str, Any] | str:
    expectation = case.expectation(Options())
    if isinstance(expectation, str):
        return expectation
    return {"stream": expectation.stream.to_json(), "whole": expectation.whole.to_json()}


def load_served(
    directory: Path, cases: Iterable[CaseIdentity] = ()
) -> tuple[list[Served], list[str]]:
    """Every cassette under `directory`, with the cases that use it; problems as messages
    (a capture that does not load, or that holds a credential, is not served)."""
    served: list[Served] = []
    problems: list[str] = []
    # By the name the case file gives (relative to its cassettes directory), so that the
    # bundled cases find a checkout's copy of the bundled cassettes, and the other way round.
    by_name: dict[str, list[Case]] = {}
    for case in own_cases(cases):
        if case.cassette is not None:
            by_name.setdefault(case.cassette.name, []).append(case)
    for path in iter_cassette_files(directory):
        try:
            cassette = load_cassette(path)
        except CassetteError as error:
            problems.append(str(error))
            continue
        # The scanner of approve and check: a credential is never handed to a client.
        refused = refusal(path)
        if refused is not None:
            problems.append(f"{refused}\nnot served")
            continue
        name = path.relative_to(directory).with_suffix("").as_posix()
        entry = Served(name, cassette, by_name.get(path.relative_to(directory).as_posix(), []))
        for interaction in cassette.interactions:
            family, form = _describe(interaction)
            entry.families.append(family)
            entry.forms.append(form)
        served.append(entry)
    return served, problems


def _describe(interaction: Interaction) -> tuple[str, str]:
    try:
        decoded = decode_interaction(interaction)
    except CassetteError:
        # Served all the same: a client may be meant to fail on it.
        return "unknown", "sse" if interaction.content_type == "text/event-stream" else "json"
    return decoded.family, decoded.form
