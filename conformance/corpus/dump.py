"""The corpus as one JSON document, for implementers in other languages."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from conformance._version import SPEC_VERSION, __version__
from conformance.model.cases import Corpus
from conformance.model.options import CHOICES, DEFAULT, ENUMERATED


def content_hash(data: dict[str, Any]) -> str:
    """SHA-256 of the case's canonical JSON: changes whenever anything in the case does."""
    canonical = json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def dump_corpus(corpus: Corpus) -> dict[str, Any]:
    cases = []
    for case in corpus.cases:
        data = case.to_json()
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
