"""junit.xml: one <testsuite> per implementation, one <testcase> per (case, check) and one per
fuzzing property (`fuzz[<property>]`), for CI UIs.

Mapping: FAIL and XPASS are failures, ERROR and TIMEOUT errors, SKIP skipped; XFAIL and
NON_STRICT pass, with a note saying so (an XFAIL's names its expectation; its input and output
are in report.md). A fuzzing failure carries its counterexample and the
command that replays it. What fails a run beyond its checks is a test case too, so a CI
never reads an interrupted or unjudged run as green: `incomplete` (an error: the session
stopped before this implementation's checks all ran), `judged` (a failure: it judged too
little of what applied to it), and, in a suite `conformance` of its own, `run` for what
belongs to no implementation (case files that failed to load, a stop after every check).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from conformance.model.results import CaseResult, FuzzResult, ImplementationRun, Run, Verdict

from ._common import option_differences, option_value
from ._fuzz_replay import replay_command
from ._plain import fuzz_block, known_block, result_block
from ._visible import escape_char, one_line

FILENAME = "junit.xml"
_FAILURE = {Verdict.FAIL, Verdict.XPASS}
_ERROR = {Verdict.ERROR, Verdict.TIMEOUT}
#: Characters XML 1.0 cannot carry at all, not even as references.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def render(run: Run) -> str:
    root = ET.Element("testsuites", name="conformance", time=f"{run.duration:.3f}")
    totals = dict.fromkeys(("tests", "failures", "errors", "skipped"), 0)
    suites = [_suite(run, implementation) for implementation in run.implementations]
    problems = _run_problems(run)
    if problems:
        suites.append(_run_suite(run, problems))
    for suite in suites:
        root.append(suite)
        for key in totals:
            totals[key] += int(suite.get(key, "0"))
    for key, value in totals.items():
        root.set(key, str(value))
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def _suite(run: Run, implementation: ImplementationRun) -> ET.Element:
    info = implementation.info
    suite = ET.Element("testsuite", name=_safe(info.label), timestamp=_safe(run.started))
    properties = ET.SubElement(suite, "properties")
    for name, value in (
        ("implementation", f"{info.name} {info.version}"),
        ("language", info.language),
        ("spec", info.spec),
        ("harness_version", run.harness_version),
        ("spec_version", run.spec_version),
    ):
        _property(properties, name, value)
    for name, value in option_differences(info.options).items():
        _property(properties, f"option.{name}", option_value(value))
    counts = dict.fromkeys(("tests", "failures", "errors", "skipped"), 0)
    if implementation.failure is not None:
        # Without this the suite would be empty, and an empty suite reads as green.
        case = ET.SubElement(
            suite, "testcase", classname=f"conformance.{_safe(info.label)}", name="start"
        )
        error = ET.SubElement(case, "error", message=_safe(one_line(implementation.failure)))
        error.text = _safe(implementation.failure)
        counts["tests"] += 1
        counts["errors"] += 1
    if run.stopped and implementation.not_run:
        message = f"INCOMPLETE: {run.stopped}; {implementation.not_run} checks not run"
        _run_case(suite, info.label, "incomplete", "error", message)
        counts["tests"] += 1
        counts["errors"] += 1
    if implementation.unjudged is not None:
        _run_case(suite, info.label, "judged", "failure", implementation.unjudged)
        counts["tests"] += 1
        counts["failures"] += 1
    for result in implementation.results:
        suite.append(_testcase(info.label, result))
        _count(counts, result.verdict)
    for fuzz_result in implementation.fuzz:
        suite.append(_fuzz_testcase(run, implementation, fuzz_result))
        _count(counts, fuzz_result.verdict)
    for key, count in counts.items():
        suite.set(key, str(count))
    return suite


def _run_case(suite: ET.Element, label: str, name: str, tag: str, message: str) -> None:
    case = ET.SubElement(suite, "testcase", classname=f"conformance.{_safe(label)}", name=name)
    element = ET.SubElement(case, tag, message=_safe(one_line(message)))
    element.text = _safe(message)


def _run_problems(run: Run) -> list[str]:
    """What fails the run and belongs to no implementation's suite."""
    own = {implementation.unjudged for implementation in run.implementations}
    problems = [problem for problem in run.problems if problem not in own]
    if run.stopped and not any(implementation.not_run for implementation in run.implementations):
        problems.append(f"INCOMPLETE: {run.stopped}")
    return problems


def _run_suite(run: Run, problems: list[str]) -> ET.Element:
    suite = ET.Element("testsuite", name="conformance", timestamp=_safe(run.started))
    for problem in problems:
        _run_case(suite, "run", "run", "error", problem)
    suite.set("tests", str(len(problems)))
    suite.set("errors", str(len(problems)))
    suite.set("failures", "0")
    suite.set("skipped", "0")
    return suite


def _count(counts: dict[str, int], verdict: Verdict) -> None:
    counts["tests"] += 1
    if verdict in _FAILURE:
        counts["failures"] += 1
    elif verdict in _ERROR:
        counts["errors"] += 1
    elif verdict is Verdict.SKIP:
        counts["skipped"] += 1


def _testcase(label: str, result: CaseResult) -> ET.Element:
    case = ET.Element(
        "testcase",
        classname=_safe(f"conformance.{label}.{result.category}"),
        name=_safe(f"{result.case}-{result.slug}[{result.check}]"),
    )
    verdict = result.verdict
    if verdict in _FAILURE or verdict in _ERROR:
        tag = "failure" if verdict in _FAILURE else "error"
        message = _safe(
            one_line(f"{verdict.value}: {result.reason}" if result.reason else verdict.value)
        )
        element = ET.SubElement(case, tag, message=message, type=verdict.value)
        element.text = _safe("\n".join(result_block(result)))
    elif verdict is Verdict.SKIP:
        ET.SubElement(case, "skipped", message=_safe(one_line(result.reason)))
    elif verdict is Verdict.XFAIL:
        out = ET.SubElement(case, "system-out")
        out.text = _safe("expected failure (XFAIL)\n" + "\n".join(known_block(result)))
    elif verdict is Verdict.NON_STRICT:
        properties = ET.SubElement(case, "properties")
        _property(properties, "verdict", verdict.value)
        _property(properties, "reason", one_line(result.reason))
    return case


def _fuzz_testcase(run: Run, implementation: ImplementationRun, result: FuzzResult) -> ET.Element:
    """One fuzzing property as a test: `fuzz[<property>]`, the counterexample in the body."""
    case = ET.Element(
        "testcase",
        classname=_safe(f"conformance.{implementation.info.label}.fuzz"),
        name=_safe(f"fuzz[{result.property}]"),
        time=f"{result.seconds:.3f}",
    )
    properties = ET.SubElement(case, "properties")
    _property(properties, "examples", str(result.examples))
    _property(properties, "seed", str(result.seed))
    verdict = result.verdict
    reason = (result.counterexample or {}).get("reason") or result.reason
    message = _safe(one_line(f"{verdict.value}: {reason}" if reason else verdict.value))
    body = _safe("\n".join(fuzz_block(result, replay_command(run, implementation, result))))
    if verdict in _FAILURE or verdict in _ERROR:
        tag = "failure" if verdict in _FAILURE else "error"
        element = ET.SubElement(case, tag, message=message, type=verdict.value)
        element.text = body
    elif verdict is Verdict.SKIP:
        ET.SubElement(case, "skipped", message=_safe(one_line(reason)))
    elif verdict is not Verdict.PASS:
        # NON_STRICT passes; the whitespace-only counterexample stays readable in the output.
        _property(properties, "verdict", verdict.value)
        _property(properties, "reason", one_line(reason))
        ET.SubElement(case, "system-out").text = body
    return case


def _property(parent: ET.Element, name: str, value: str) -> None:
    ET.SubElement(parent, "property", name=_safe(name), value=_safe(value))


def _safe(text: str) -> str:
    """Text XML can carry: ElementTree writes control characters unchecked, breaking the file."""
    return _NOT_XML.sub(lambda match: escape_char(match.group()), text)
