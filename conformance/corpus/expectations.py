"""Expected failures per implementation (`expectations/<label>.yaml`): XFAIL and XPASS.

Two forms. The one users write by hand, a case ID and why:

    # expectations/vercel-ai.yaml
    K7QF:
      reason: the end-of-stream flush drops a held partial tag
      link: https://github.com/vercel/ai/pull/15583
      checks: [stream, chars]      # optional; default every check

and the lock `conformance matrix --update-expectations` generates for the bundled adapters,
keyed by the rules of `adapters/divergences.yaml` (each rule's reason and link written once),
with the failing cases of each rule grouped by the checks that fail and by the transform of a
derived case (`written` for the case as written, `~start+think_only` for `ABCD~start+think_only`):

    lock: 1
    rules:
      vercel-no-flush:
        reason: the stream transform has no flush()
        link: https://github.com/vercel/ai/pull/15583
        cases:
          stream chars splits:       # or `all`
            written: [K7QF, ...]
            ~start+think_only: [K7QF, ...]

A listed case that fails is XFAIL; one that passes is XPASS, reported so the entry can go.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from conformance.cassettes._yaml import ShapeProblem, guarded_load
from conformance.contracts import all_checks, contract_checks
from conformance.corpus.cases import schema
from conformance.errors import UsageError
from conformance.model.results import CaseResult, Verdict

_FAILING = {Verdict.FAIL, Verdict.ERROR, Verdict.TIMEOUT}
_PASSING = {Verdict.PASS, Verdict.NON_STRICT}
LOCK_VERSION = 1
#: The variant key of a case as written (no transform).
WRITTEN = "written"
ALL_CHECKS = "all"
_BASE = re.compile(r"[A-HJ-NP-Z2-9]{4}")
_VARIANT = re.compile(r"~[a-z_.]+(\+[a-z_.]+)*")
_RULE_ID = re.compile(r"[a-z0-9][a-z0-9.-]*")

Note = Mapping[str, str]


@dataclass(frozen=True, slots=True)
class ExpectedFailures:
    file: Path | None
    #: The hand-written form: case ID -> {reason, link, checks}.
    entries: Mapping[str, Mapping[str, Any]]
    #: The lock form: case ID -> check -> {reason, link, rule}.
    locked: Mapping[str, Mapping[str, Note]] = field(default_factory=dict)

    def note(self, case: str, check: str) -> Note | None:
        """What the file says about one check of one case, or None."""
        if case in self.locked:
            return self.locked[case].get(check)
        entry = self.entries.get(case)
        if entry is None or ("checks" in entry and check not in entry["checks"]):
            return None
        return {"reason": entry["reason"], **({"link": entry["link"]} if "link" in entry else {})}

    def cases(self) -> set[str]:
        return set(self.entries) | set(self.locked)

    def apply(self, result: CaseResult) -> CaseResult:
        note = self.note(result.case, result.check)
        if note is None:
            return result
        if result.verdict in _FAILING:
            return replace(
                result,
                verdict=Verdict.XFAIL,
                expectation=note,
                reason=f"expected failure ({note['reason']}): {result.reason}",
            )
        if result.verdict in _PASSING:
            return replace(
                result,
                verdict=Verdict.XPASS,
                expectation=note,
                reason=f"passes, but {self.file} lists it as an expected failure "
                f"({note['reason']}): remove the entry",
            )
        return result


def load_expected_failures(path: Path) -> ExpectedFailures:
    """Load one expectation file, either form; a missing file means no expected failures."""
    if not path.exists():
        return ExpectedFailures(None, {})
    try:
        data = guarded_load(path.read_text("utf-8")) or {}
    except ShapeProblem as problem:
        line = f":{problem.line}" if problem.line else ""
        raise UsageError(f"{path}{line}: {problem.message}") from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        raise UsageError(f"{path}{line}: malformed YAML: {error}") from None
    if isinstance(data, dict) and "lock" in data:
        return ExpectedFailures(path, {}, _load_lock(path, data))
    import jsonschema  # slow to import: only when there is a file to check

    errors = sorted(
        jsonschema.Draft202012Validator(expectations_schema()).iter_errors(data),
        key=lambda e: list(e.absolute_path),
    )
    if errors:
        first = errors[0]
        where = "/".join(str(p) for p in first.absolute_path) or "the file"
        raise UsageError(
            f"{path}: {where}: {first.message} (an entry is `CASE_ID: "
            "{reason: ..., link: ..., checks: [...]}`)"
        )
    return ExpectedFailures(path, data)


def expected_failures_for(directory: Path | None, label: str) -> ExpectedFailures:
    if directory is None:
        return ExpectedFailures(None, {})
    return load_expected_failures(directory / f"{label}.yaml")


# --- the lock form ------------------------------------------------------------------------


def _load_lock(path: Path, data: Mapping[str, Any]) -> dict[str, dict[str, Note]]:
    def bad(where: str, problem: str) -> UsageError:
        return UsageError(
            f"{path}: {where}: {problem} (a lock is `lock: {LOCK_VERSION}` and `rules: "
            "{RULE_ID: {reason, link, cases: {CHECKS: {TRANSFORM: [CASE_ID, ...]}}}}`; "
            "`conformance matrix --update-expectations` writes it)"
        )

    if data.get("lock") != LOCK_VERSION:
        raise bad("lock", f"version {data.get('lock')!r} is not {LOCK_VERSION}")
    rules = data.get("rules") or {}
    if not isinstance(rules, dict):
        raise bad("rules", "not a mapping")
    locked: dict[str, dict[str, Note]] = {}
    for rule_id, rule in rules.items():
        where = f"rules/{rule_id}"
        if not _RULE_ID.fullmatch(str(rule_id)):
            raise bad(where, "a rule ID is lowercase letters, digits, '.' and '-'")
        if not isinstance(rule, dict) or not isinstance(rule.get("reason"), str):
            raise bad(where, "a rule needs a `reason`")
        note = {"reason": " ".join(rule["reason"].split()), "rule": str(rule_id)}
        if rule.get("link"):
            note["link"] = str(rule["link"])
        for checks_key, variants in (rule.get("cases") or {}).items():
            checks = parse_checks(str(checks_key))
            if checks is None:
                raise bad(
                    f"{where}/cases/{checks_key}", f"checks are `{ALL_CHECKS}` or {all_checks()}"
                )
            for variant, bases in (variants or {}).items():
                if variant != WRITTEN and not _VARIANT.fullmatch(str(variant)):
                    raise bad(f"{where}/cases/{checks_key}/{variant}", "not a transform")
                for base in bases or []:
                    if not _BASE.fullmatch(str(base)):
                        raise bad(f"{where}/cases/{checks_key}/{variant}", f"{base!r}: no case ID")
                    case = base if variant == WRITTEN else f"{base}{variant}"
                    by_check = locked.setdefault(case, {})
                    for check in checks:
                        if check in by_check:
                            other = by_check[check]["rule"]
                            raise bad(where, f"{case} {check} is also listed under {other}")
                        by_check[check] = note
    return locked


def expectations_schema() -> dict[str, Any]:
    """The expectation-file schema, with the check names of every registered contract."""
    data = copy.deepcopy(schema("expectations.schema.json"))
    data["additionalProperties"]["properties"]["checks"]["items"]["enum"] = list(all_checks())
    return data


def parse_checks(key: str) -> tuple[str, ...] | None:
    """The checks a lock's checks key names, or None when it names something else. `all`
    names every check of the case's contract (check names are unique across contracts, so
    it stands for every registered check)."""
    if key == ALL_CHECKS:
        return all_checks()
    checks = tuple(key.split())
    return checks if checks and set(checks) <= set(all_checks()) else None


def checks_key(checks: list[str] | tuple[str, ...]) -> str:
    """A lock's key for the failing checks of one case: `all` when they are every check of
    the case's contract."""
    for own in contract_checks().values():
        if set(checks) <= set(own):
            ordered = [c for c in own if c in checks]
            return ALL_CHECKS if ordered == list(own) else " ".join(ordered)
    return " ".join(c for c in all_checks() if c in checks)


def render_lock(
    header: str,
    rules: Mapping[str, Mapping[str, Any]],
    failing: Mapping[str, Mapping[str, list[str]]],
) -> str:
    """A lock's text: `header` (comment lines), then for each rule of `rules` (rule ID ->
    reason, link) with a failure in `failing` (rule ID -> case ID -> failing checks), its
    cases grouped by checks and transform."""
    body: dict[str, Any] = {}
    for rule_id, rule in rules.items():
        cases = failing.get(rule_id)
        if not cases:
            continue
        grouped: dict[str, dict[str, list[str]]] = {}
        for case in sorted(cases):
            base, tilde, variant = case.partition("~")
            key = checks_key(cases[case])
            grouped.setdefault(key, {}).setdefault(f"~{variant}" if tilde else WRITTEN, [])
            grouped[key][f"~{variant}" if tilde else WRITTEN].append(base)
        entry: dict[str, Any] = {"reason": " ".join(str(rule["reason"]).split())}
        if rule.get("link"):
            entry["link"] = rule["link"]
        entry["cases"] = {
            key: {v: grouped[key][v] for v in sorted(grouped[key], key=_variant_order)}
            for key in sorted(grouped, key=_checks_order)
        }
        body[rule_id] = entry
    text = yaml.safe_dump(
        {"lock": LOCK_VERSION, "rules": body},
        sort_keys=False,
        allow_unicode=True,
        width=100,
        default_flow_style=None,
    )
    return header + text


def _variant_order(variant: str) -> tuple[bool, str]:
    return variant != WRITTEN, variant


def _checks_order(key: str) -> tuple[bool, str]:
    return key != ALL_CHECKS, key
