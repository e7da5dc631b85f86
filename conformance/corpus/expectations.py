"""Expected failures per implementation (`expectations/<label>.yaml`): XFAIL and XPASS.

    # expectations/vercel-ai.yaml
    K7QF:
      reason: the end-of-stream flush drops a held partial tag
      link: https://github.com/vercel/ai/pull/15583
      checks: [stream, chars]      # optional; default every check

A listed case that fails is XFAIL; one that passes is XPASS, reported so the entry can go.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml

from conformance.corpus.cases import schema
from conformance.errors import UsageError
from conformance.model.results import CaseResult, Verdict

_FAILING = {Verdict.FAIL, Verdict.ERROR, Verdict.TIMEOUT}
_PASSING = {Verdict.PASS, Verdict.NON_STRICT}


@dataclass(frozen=True, slots=True)
class ExpectedFailures:
    file: Path | None
    entries: Mapping[str, Mapping[str, Any]]

    def apply(self, result: CaseResult) -> CaseResult:
        entry = self.entries.get(result.case)
        if entry is None or ("checks" in entry and result.check not in entry["checks"]):
            return result
        note = {"reason": entry["reason"], **({"link": entry["link"]} if "link" in entry else {})}
        if result.verdict in _FAILING:
            return replace(
                result,
                verdict=Verdict.XFAIL,
                expectation=note,
                reason=f"expected failure ({entry['reason']}): {result.reason}",
            )
        if result.verdict in _PASSING:
            return replace(
                result,
                verdict=Verdict.XPASS,
                expectation=note,
                reason=f"passes, but {self.file} lists it as an expected failure "
                f"({entry['reason']}): remove the entry",
            )
        return result


def load_expected_failures(path: Path) -> ExpectedFailures:
    """Load one expectation file; a missing file means no expected failures."""
    if not path.exists():
        return ExpectedFailures(None, {})
    try:
        data = yaml.safe_load(path.read_text("utf-8")) or {}
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        raise UsageError(f"{path}{line}: malformed YAML: {error}") from None
    import jsonschema  # slow to import: only when there is a file to check

    errors = sorted(
        jsonschema.Draft202012Validator(schema("expectations.schema.json")).iter_errors(data),
        key=lambda e: list(e.absolute_path),
    )
    if errors:
        error = errors[0]
        where = "/".join(str(p) for p in error.absolute_path) or "the file"
        raise UsageError(
            f"{path}: {where}: {error.message} (an entry is `CASE_ID: "
            "{reason: ..., link: ..., checks: [...]}`)"
        )
    return ExpectedFailures(path, data)


def expected_failures_for(directory: Path | None, label: str) -> ExpectedFailures:
    if directory is None:
        return ExpectedFailures(None, {})
    return load_expected_failures(directory / f"{label}.yaml")
