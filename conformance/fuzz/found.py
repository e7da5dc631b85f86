"""Found counterexamples as ready-to-commit case files, expectations from the reference."""

from __future__ import annotations

import dataclasses
import hashlib
import random
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from conformance.contracts import op_contract
from conformance.corpus.casegen import (
    expectations_for,
    guess_taxonomy,
    new_case_id,
    render_case_file,
)
from conformance.model.options import Options, is_enumerated
from conformance.model.results import FuzzResult, Verdict
from conformance.transport.spec import ImplementationSpec


def _found_file(
    result: FuzzResult,
    label: str,
    spec: str,
    taken: Iterable[str],
    body: Mapping[str, Any],
    *,
    taxonomy: str,
    contract_name: str | None = None,
) -> tuple[str, str]:
    """A ready-to-commit case file for a counterexample: (case ID, file text)."""
    seed_key = repr((body, result.property, label))
    case_id = new_case_id(taken, random.Random(seed_key))
    case = {
        "id": case_id,
        "slug": f"fuzz-{result.property}-{case_id.lower()}",
        "title": f"Found by the {result.property} property against {label}"[:90],
        "taxonomy": taxonomy,
        "level": "must",
        **body,
        "provenance": [
            {
                "kind": "fuzz",
                "ref": f"conformance fuzz --impl {label}={spec} --seed {result.seed}",
                "test": result.property,
            }
        ],
        "note": result.reason,
    }
    category = f"fuzz-{contract_name}" if contract_name else "fuzz"
    text = render_case_file(
        category,
        f"Found by `conformance fuzz` against {label}; review the expected output against "
        "SPEC.md before committing.",
        [case],
        contract=contract_name,
    )
    return case_id, text


def found_case(
    result: FuzzResult, label: str, spec: str, options: Options, taken: Iterable[str]
) -> tuple[str, str]:
    """A normalizer case file for a counterexample, expectations from the reference for
    every option profile (and the implementation's own opt-in options)."""
    assert result.counterexample is not None
    chunks = [
        {"content": c.get("content"), "reasoning": c.get("reasoning")}
        for c in result.counterexample["chunks"]
    ]
    extra = [] if is_enumerated(options) else [options]
    body = {"chunks": chunks, **expectations_for(chunks, extra)}
    return _found_file(result, label, spec, taken, body, taxonomy=guess_taxonomy(chunks, options))


def found_contract_case(
    result: FuzzResult, label: str, spec: str, taken: Iterable[str]
) -> tuple[str, str]:
    """A case file of another contract for a counterexample of its property."""
    assert result.counterexample is not None
    name = result.counterexample["contract"]
    module = op_contract(name)
    case_input = result.counterexample["input"]
    body = {"input": case_input, "expected": module.expected_for(case_input)}
    return _found_file(
        result,
        label,
        spec,
        taken,
        body,
        taxonomy=module.guess_taxonomy(case_input),
        contract_name=name,
    )


#: Characters of a label kept in a file name: with the property and case ID after it, the
#: name stays far below the 255 bytes a file system allows.
LABEL_IN_NAME = 64


def safe_label(label: str) -> str:
    """`label` as one short file-name component: no separators, no `..`, nothing hidden; a
    long label is cut and keeps a digest of the whole, so two long labels stay apart."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", label).strip("._") or "impl"
    if len(name) <= LABEL_IN_NAME:
        return name
    digest = hashlib.sha256(label.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"{name[: LABEL_IN_NAME - 13]}-{digest}"


def write_found(directory: Path, label: str, case_id: str, text: str, prop: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{safe_label(label)}-{prop}-{case_id}.yaml"
    path.write_text(text, "utf-8")
    return path


def record_found(
    result: FuzzResult,
    spec: ImplementationSpec,
    options: Options,
    taken: set[str],
    directory: Path,
) -> FuzzResult:
    """Write the case file of a failure's counterexample into `directory`, and only there,
    and return the result naming it; `taken` gains the new case ID."""
    example = result.counterexample
    if result.verdict not in (Verdict.FAIL, Verdict.ERROR) or example is None:
        return result
    if "contract" in example:
        case_id, text = found_contract_case(result, spec.label, spec.spec, taken)
    else:
        case_id, text = found_case(result, spec.label, spec.spec, options, taken)
    taken.add(case_id)
    path = write_found(directory, spec.label, case_id, text, result.property)
    return dataclasses.replace(result, case_file=str(path))
