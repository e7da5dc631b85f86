"""The corpus as one JSON document, for implementers in other languages."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from conformance._version import SPEC_VERSION, __version__
from conformance.corpus.cases import Case, ContractCase, Corpus
from conformance.model.options import CHOICES, DEFAULT, ENUMERATED


def case_json(case: Case) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": case.id,
        "slug": case.slug,
        "title": case.title,
        "category": case.category,
        "taxonomy": case.taxonomy,
        "level": case.level,
        "chunks": [chunk.to_json() for chunk in case.chunks],
        "expected": case.expected.to_json(),
    }
    if case.whole is not None:
        data["whole"] = case.whole.to_json()
    if case.variants:
        data["variants"] = []
        for variant in case.variants:
            entry: dict[str, Any] = {"when": dict(variant.when)}
            if variant.expected is not None:
                entry["expected"] = variant.expected.to_json()
            if variant.whole is not None:
                entry["whole"] = variant.whole.to_json()
            if variant.undefined is not None:
                entry["undefined"] = variant.undefined
            data["variants"].append(entry)
    data["provenance"] = [
        {"kind": p.kind, "ref": p.ref, **({"test": p.test} if p.test else {})}
        for p in case.provenance
    ]
    return data


def content_hash(data: dict[str, Any]) -> str:
    """SHA-256 of the case's canonical JSON: changes whenever anything in the case does."""
    canonical = json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def contract_case_json(case: ContractCase) -> dict[str, Any]:
    return {
        "id": case.id,
        "slug": case.slug,
        "title": case.title,
        "category": case.category,
        "contract": case.contract,
        "taxonomy": case.taxonomy,
        "level": case.level,
        "input": dict(case.input),
        "expected": dict(case.expected),
        "provenance": [
            {"kind": p.kind, "ref": p.ref, **({"test": p.test} if p.test else {})}
            for p in case.provenance
        ],
    }


def dump_corpus(corpus: Corpus) -> dict[str, Any]:
    cases = []
    for case in corpus.cases:
        data = contract_case_json(case) if isinstance(case, ContractCase) else case_json(case)
        data["hash"] = content_hash(data)
        cases.append(data)
    return {
        "spec_version": SPEC_VERSION,
        "harness_version": __version__,
        "options": {
            "default": DEFAULT.to_json(),
            "values": {name: list(values) for name, values in CHOICES.items()},
            "enumerated": {name: list(values) for name, values in ENUMERATED.items()},
        },
        "cases": cases,
    }
