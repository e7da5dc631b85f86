"""`conformance findings`: each library's bugs as its maintainers would want them, from the
results of matrix runs (their report directories' results.json) and the rules of
adapters/divergences.yaml.

    page = render_findings(collect_findings([load_results(path)], load_divergences()))

For each implementation and bug class (reports/_bugclass.py): how many checks fail so, the
smallest failing input (fewest characters, then fewest chunks), the library's version, a
command that judges that one input again, and the upstream issue or pull request of the rule
explaining it, or, where no issue is filed, a report ready to file.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from conformance.adapters import ADAPTERS
from conformance.adapters.adapter import shown
from conformance.model.options import Options
from conformance.model.results import CaseResult, ImplementationRun, Run, Verdict
from conformance.reports._bugclass import BY_NAME, classify

#: Verdicts that are failures of the library, whether expected or not.
FAILED = frozenset({Verdict.FAIL, Verdict.ERROR, Verdict.TIMEOUT, Verdict.XFAIL})
UPSTREAM = re.compile(r"/(issues|pull|pulls|discussions)/\d+")
REFERENCE = "reference"
#: What a rule's reason says when no upstream issue or pull request is filed.
NONE_FOUND = "no upstream issue found"


@dataclass(frozen=True, slots=True)
class Finding:
    """One bug class of one implementation."""

    label: str
    library: str
    name: str
    version: str
    spec: str
    bug: str
    #: Failing checks of this class (all cases).
    count: int
    smallest: CaseResult
    rule: Mapping[str, Any] | None

    @property
    def upstream(self) -> str | None:
        link = (self.rule or {}).get("link") or ""
        return link if UPSTREAM.search(link) else None

    def command(self) -> str:
        words = ["conformance", "run", "--impl", f"{self.label}={shown(self.spec)}"]
        return shlex.join([*words, "--id", self.smallest.case, "--check", self.smallest.check])


def is_upstream(link: str | None) -> bool:
    """Whether `link` is an upstream issue, pull request or discussion (not code)."""
    return bool(link and UPSTREAM.search(link))


def size(result: CaseResult) -> tuple[int, int, str, str]:
    """How small a failing input is: its characters, then its chunks (then stable order)."""
    chunks = result.chunks or []
    chars = sum(len(c.get("content") or "") + len(c.get("reasoning") or "") for c in chunks)
    return (chars, len(chunks), result.case, result.check)


def collect_findings(
    runs: Iterable[Run], rules: Mapping[str, Sequence[Mapping[str, Any]]]
) -> list[Finding]:
    """The findings of every implementation of `runs` but the reference; a label judged in
    several runs counts from the last one."""
    latest: dict[str, ImplementationRun] = {}
    for run in runs:
        for impl in run.implementations:
            if impl.info.label != REFERENCE and impl.failure is None:
                latest[impl.info.label] = impl
    libraries = {a.label: a.library for a in ADAPTERS}
    found = []
    for label in sorted(latest):
        impl = latest[label]
        grammar = Options.from_mapping(impl.info.options).grammar
        by_class: dict[str, list[CaseResult]] = {}
        for result in impl.results:
            if result.verdict in FAILED:
                by_class.setdefault(classify(result, grammar).name, []).append(result)
        for bug in sorted(by_class, key=list(BY_NAME).index):
            failing = by_class[bug]
            smallest = min(failing, key=size)
            found.append(
                Finding(
                    label,
                    libraries.get(label, impl.info.name),
                    impl.info.name,
                    impl.info.version,
                    impl.info.spec,
                    bug,
                    len(failing),
                    smallest,
                    _rule(smallest, bug, rules.get(label, ())),
                )
            )
    return found


def _rule(
    result: CaseResult, bug: str, rules: Sequence[Mapping[str, Any]]
) -> Mapping[str, Any] | None:
    """The rule that explains `result`: the one its lock named, else the first that matches
    its class and check (as `matrix --update-expectations` assigns them)."""
    named = (result.expectation or {}).get("rule")
    for rule in rules:
        if rule.get("id") == named:
            return rule
    for rule in rules:
        classes = rule.get("class")
        classes = [classes] if isinstance(classes, str) else classes or []
        if bug in classes and ("checks" not in rule or result.check in rule["checks"]):
            return rule
    return None


def render_findings(findings: Sequence[Finding], command: str) -> str:
    """The findings page (markdown)."""
    lines = [
        "# Findings, ready for upstream",
        "",
        f"<!-- Generated by `{command}`: do not edit by hand. -->",
        "",
        "Each library's failures by bug class (what the two channels show, "
        "[classified](fuzzing.md#every-distinct-bug-once) as the fuzzer does), from the latest "
        "matrix run: the smallest input that shows the class (fewest characters, then fewest "
        "chunks), the version judged, a command that judges that input again, and the "
        "upstream issue or pull request where one is filed, or a report ready to file. The "
        "rules behind them are in `conformance/adapters/divergences.yaml`.",
        "",
    ]
    if not findings:
        lines += ["No failures in the results read.", ""]
    lines += _overview(findings)
    current = None
    for finding in findings:
        if finding.label != current:
            current = finding.label
            lines += [f"## {finding.label}", ""]
            lines += [f"{finding.library}, {finding.name} {finding.version}.", ""]
        lines += _finding(finding)
    return "\n".join(lines).rstrip() + "\n"


def _overview(findings: Sequence[Finding]) -> list[str]:
    if not findings:
        return []
    lines = ["| implementation | version | bug class | what | failing checks | upstream |"]
    lines.append("| --- | --- | --- | --- | ---: | --- |")
    for f in findings:
        upstream = f"[link]({f.upstream})" if f.upstream else "none filed"
        what = BY_NAME[f.bug].title if f.bug in BY_NAME else ""
        lines.append(f"| {f.label} | {f.version} | {f.bug} | {what} | {f.count} | {upstream} |")
    return [*lines, ""]


def _finding(finding: Finding) -> list[str]:
    result = finding.smallest
    rule = finding.rule or {}
    lines = [f"### {finding.label}: {finding.bug}", ""]
    lines.append(
        f"{finding.count} failing checks; the smallest input is case `{result.case}` "
        f"({result.title or result.slug}), check `{result.check}`."
    )
    lines += ["", "```json", _input(result), "```", ""]
    lines += ["Reproduce:", "", "```sh", finding.command(), "```", ""]
    if rule:
        lines.append(f"Why (rule `{rule.get('id')}`): {rule.get('reason', '')}")
        lines.append("")
    if finding.upstream:
        lines += [f"Upstream: {finding.upstream}", ""]
    else:
        lines += ["No upstream issue is filed; a report ready to file:", ""]
        lines += ["```text", *_report(finding), "```", ""]
    return lines


def _input(result: CaseResult) -> str:
    shown_chunks = [{k: v for k, v in c.items() if v is not None} for c in result.chunks or []]
    data = {
        "chunks": shown_chunks,
        "expected": dict(result.expected or {}),
        "actual": dict(result.actual or {}),
    }
    return json.dumps(data, indent=2, ensure_ascii=False)


def _report(finding: Finding) -> list[str]:
    result = finding.smallest
    bug = BY_NAME[finding.bug].title if finding.bug in BY_NAME else finding.bug
    chunks = json.dumps([c.get("content") for c in result.chunks or []], ensure_ascii=False)
    expected = result.expected or {}
    actual = result.actual or {}
    lines = [
        f"Title: {finding.library} {finding.version}: {bug} ({result.title or result.slug})",
        "",
        f"{finding.name} {finding.version}, as driven by reasoning-conformance's "
        f"`{finding.label}` adapter ({shown(finding.spec)}).",
        f"Content chunks: {chunks}",
        f"Expected answer {json.dumps(expected.get('assistant'), ensure_ascii=False)}, "
        f"reasoning {json.dumps(expected.get('thinking'), ensure_ascii=False)}.",
        f"Got answer {json.dumps(actual.get('assistant'), ensure_ascii=False)}, "
        f"reasoning {json.dumps(actual.get('thinking'), ensure_ascii=False)}.",
    ]
    if result.verdict in (Verdict.ERROR, Verdict.TIMEOUT):
        lines.append(f"It ends in {result.verdict}: {result.reason}")
    if finding.rule:
        cause = str(finding.rule.get("reason", "")).removesuffix(f"; {NONE_FOUND}")
        lines.append(f"Cause: {cause}")
    lines.append(f"{finding.count} checks of the conformance corpus fail the same way.")
    return lines
