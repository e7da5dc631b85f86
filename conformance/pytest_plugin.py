"""pytest plugin: `pytest --conformance-impl SPEC` runs the corpus as tests.

One test per (implementation, case, check), named `conformance[LABEL]::ID-slug[check]` and
marked `conformance` and `conformance_<category>`, so `-k`, `-m`, `-x`, `--junitxml` and
pytest-xdist work as usual. The harness modules are imported only when the plugin is used.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from conformance.corpus.cases import Case
    from conformance.model.results import CaseResult

GROUP = "conformance"
IMPL = "--conformance-impl"
OPTIONS = "--conformance-options"
CASES = "--conformance-cases"
CHECK = "--conformance-check"
TIMEOUT = "--conformance-timeout"
EXPECTATIONS = "--conformance-expectations"
REPORT_DIR = "--conformance-report-dir"
FUZZ = "--conformance-fuzz"
RESULT_PROPERTY = "conformance_result"
FUZZ_PROPERTY = "conformance_fuzz"

_state_key = pytest.StashKey["_State"]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup(GROUP, "reasoning-channel conformance suite")
    group.addoption(
        IMPL,
        action="append",
        default=[],
        metavar="[NAME=]SPEC",
        help="run the conformance corpus against this implementation "
        "(reference, python:module:attr, cmd:<command>); repeatable",
    )
    group.addoption(
        OPTIONS,
        action="append",
        default=[],
        metavar="[NAME=]JSON",
        help="options to run the implementation under (JSON object)",
    )
    group.addoption(
        CASES,
        action="append",
        default=[],
        metavar="DIR",
        help="case directory or file (default: the bundled corpus)",
    )
    group.addoption(
        CHECK,
        action="append",
        default=[],
        metavar="CHECK",
        help="only these checks: whole, stream, chars, splits",
    )
    group.addoption(
        TIMEOUT,
        type=float,
        default=None,
        metavar="SECONDS",
        help="per-request timeout for cmd: implementations (default 5)",
    )
    group.addoption(
        EXPECTATIONS,
        default=None,
        metavar="DIR",
        help="directory of expected-failure files <NAME>.yaml",
    )
    group.addoption(
        FUZZ,
        action="store_true",
        help="also fuzz each implementation, one test per property; the Hypothesis profile "
        "in force sets the budget (max_examples), determinism (derandomize) and database",
    )
    group.addoption(
        REPORT_DIR, default=None, metavar="DIR", help="also write the conformance reports here"
    )
    parser.addini(
        "conformance_impl", "implementations to run the corpus against", type="linelist", default=[]
    )


class _State:
    """Connections are opened on first use and closed at the end of the session."""

    def __init__(self, config: pytest.Config) -> None:
        from conformance.session.run import implementation_specs
        from conformance.transport.spec import DEFAULT_TIMEOUT

        impls = config.getoption(IMPL) or config.getini("conformance_impl")
        self.specs = implementation_specs(impls, config.getoption(OPTIONS))
        self.timeout = config.getoption(TIMEOUT) or DEFAULT_TIMEOUT
        expectations = config.getoption(EXPECTATIONS)
        self.expectations_dir = Path(expectations) if expectations else None
        self.connections: dict[str, Any] = {}
        self.results: dict[str, list[CaseResult]] = {}
        self.infos: dict[str, Any] = {}

    def connection(self, label: str) -> Any:
        if label not in self.connections:
            from conformance.transport.impls import connect

            spec = next(spec for spec in self.specs if spec.label == label)
            self.connections[label] = connect(spec, timeout=self.timeout)
            self.infos[label] = self.connections[label].info
        return self.connections[label]

    def close(self) -> None:
        for connection in self.connections.values():
            connection.close()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "conformance: a conformance-suite case")
    config.addinivalue_line("markers", "conformance_fuzz: a fuzzing property (--conformance-fuzz)")
    if not (config.getoption(IMPL) or config.getini("conformance_impl")):
        return
    from conformance.corpus.cases import bundled_cases_dir, load_corpus

    from .errors import ConformanceError

    try:
        state = _State(config)
    except ConformanceError as error:
        raise pytest.UsageError(str(error)) from None
    dirs = [Path(d) for d in config.getoption(CASES)] or [bundled_cases_dir()]
    corpus = load_corpus(dirs)
    if corpus.errors:
        problems = "\n".join(str(e) for e in corpus.errors)
        raise pytest.UsageError(f"conformance case files have errors:\n{problems}")
    config.stash[_state_key] = state
    state.cases = corpus.cases  # type: ignore[attr-defined]
    for category in sorted({case.category for case in corpus.cases}):
        config.addinivalue_line("markers", f"{_marker(category)}: cases of {category}")


def _marker(category: str) -> str:
    return "conformance_" + category.replace("-", "_")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    state = config.stash.get(_state_key, None)
    if state is None:
        return
    from conformance.contracts import all_checks, contract_checks
    from conformance.corpus.cases import ContractCase
    from conformance.model.results import CHECKS

    checks = config.getoption(CHECK) or list(all_checks())
    unknown = sorted(set(checks) - set(all_checks()))
    if unknown:
        raise pytest.UsageError(f"{CHECK} {unknown[0]}: the checks are {', '.join(all_checks())}")
    for spec in state.specs:
        suite = ConformanceSuite.from_parent(session, name=f"conformance[{spec.label}]")
        for case in state.cases:
            own = contract_checks()[case.contract] if isinstance(case, ContractCase) else CHECKS
            for check in (c for c in checks if c in own):
                item = ConformanceItem.from_parent(
                    suite,
                    name=f"{case.id}-{case.slug}[{check}]",
                    label=spec.label,
                    case=case,
                    check=check,
                )
                item.add_marker("conformance")
                item.add_marker(_marker(case.category))
                items.append(item)
        if config.getoption(FUZZ):
            from conformance.contracts import fuzz_properties

            for name in fuzz_properties():
                fuzz_item = FuzzItem.from_parent(
                    suite, name=f"fuzz[{name}]", label=spec.label, property_name=name
                )
                fuzz_item.add_marker("conformance")
                fuzz_item.add_marker("conformance_fuzz")
                items.append(fuzz_item)


class ConformanceSuite(pytest.Collector):
    """Groups one implementation's tests; its items are made by the plugin, not collected."""

    def collect(self) -> list[pytest.Item]:
        return []


class ConformanceFailure(Exception):
    def __init__(self, result: CaseResult) -> None:
        super().__init__(result.reason)
        self.result = result


class ConformanceItem(pytest.Item):
    def __init__(self, *, label: str, case: Case, check: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.label = label
        self.case = case
        self.check = check

    def runtest(self) -> None:
        from conformance.corpus.expectations import expected_failures_for
        from conformance.engine.runner import judge, plan_case
        from conformance.model.options import Options
        from conformance.model.results import Verdict

        state: _State = self.config.stash[_state_key]
        connection = state.connection(self.label)
        options = Options.from_mapping(connection.info.options)
        plan = plan_case(self.case, options, [self.check])[0]
        result = judge(plan, connection.send(plan.requests), options)
        result = expected_failures_for(state.expectations_dir, self.label).apply(result)
        _record(self, RESULT_PROPERTY, connection.info, result)
        if result.verdict == Verdict.XFAIL:
            pytest.xfail(result.reason)
        elif not result.verdict.ok:
            raise ConformanceFailure(result)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, ConformanceFailure):
            result = excinfo.value.result
            lines = [
                f"{result.verdict.value}: {self.case.title} ({self.case.where})",
                f"reason: {result.reason}",
            ]
            if result.chunks is not None:
                lines.append(f"chunks: {json.dumps(result.chunks, ensure_ascii=False)}")
            for name in ("assistant", "thinking"):
                if result.expected is not None:
                    lines.append(f"expected {name}: {result.expected[name]!r}")
                if result.actual is not None:
                    lines.append(f"actual   {name}: {result.actual[name]!r}")
            if result.stderr:
                lines.append(f"stderr (tail):\n{result.stderr}")
            return "\n".join(lines)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int, str]:
        return (
            self.case.file,
            self.case.line - 1,
            f"{self.case.id} {self.case.title} [{self.check}]",
        )


def _record(item: pytest.Item, name: str, info: Any, result: Any) -> None:
    """Hand a result to the reports (through the test report, so xdist carries it), and
    settle the verdicts pytest has its own words for: NON_STRICT passes, SKIP skips."""
    from conformance.model.results import Verdict

    record = {"label": info.label, "info": info.to_json(), "result": result.to_json()}
    item.user_properties.append((name, json.dumps(record)))
    if result.verdict == Verdict.NON_STRICT:
        item.user_properties.append(("non_strict", result.reason))
    elif result.verdict == Verdict.SKIP:
        pytest.skip(result.reason)


class FuzzItem(pytest.Item):
    """One fuzzing property against one implementation, under the Hypothesis profile."""

    def __init__(self, *, label: str, property_name: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.label = label
        self.property_name = property_name

    def runtest(self) -> None:
        import random

        from hypothesis import settings

        from conformance.fuzz.properties import Target, run_property
        from conformance.model.options import Options

        state: _State = self.config.stash[_state_key]
        connection = state.connection(self.label)
        profile = settings.default
        # A deterministic profile (`ci`) fixes the seed; otherwise each run explores anew.
        seed = 0 if profile.derandomize else random.randrange(2**32)
        result = run_property(
            self.property_name,
            Target(connection, Options.from_mapping(connection.info.options)),
            max_examples=profile.max_examples,
            seed=seed,
            database=profile.database,
            key=f"conformance/{self.label}/{self.property_name}".encode(),
        )
        _record(self, FUZZ_PROPERTY, connection.info, result)
        if not result.verdict.ok:
            raise FuzzFailure(result)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if not isinstance(excinfo.value, FuzzFailure):
            return str(super().repr_failure(excinfo))
        result = excinfo.value.result
        lines = [
            f"{result.verdict.value}: property {result.property} after {result.examples} "
            f"examples (seed {result.seed})",
            f"reason: {result.reason}",
        ]
        example = result.counterexample or {}
        if "chunks" in example:
            lines.append(f"shrunk input: {json.dumps(example['chunks'], ensure_ascii=False)}")
        for key in ("expected", "actual"):
            if key in example:
                lines.append(f"{key}: {json.dumps(example[key], ensure_ascii=False)}")
        lines.append(
            f"replay: conformance fuzz --impl {self.label}=... --property "
            f"{result.property} --seed {result.seed} --database none"
        )
        return "\n".join(lines)

    def reportinfo(self) -> tuple[str, int, str]:
        return "conformance-fuzz", 0, f"{self.label}: fuzz {self.property_name}"


class FuzzFailure(Exception):
    def __init__(self, result: Any) -> None:
        super().__init__(result.reason)
        self.result = result


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Collect results on the controlling process (also under xdist) for the reports."""
    if report.when != "call" and not (report.when == "setup" and report.skipped):
        return
    for name, value in report.user_properties:
        if name in (RESULT_PROPERTY, FUZZ_PROPERTY):
            data = json.loads(value)
            entry = _collected.setdefault(data["label"], (data["info"], [], []))
            entry[1 if name == RESULT_PROPERTY else 2].append(data["result"])


#: Per implementation label: its info, its case results and its fuzz results (as JSON).
_collected: dict[str, tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]] = {}


def pytest_sessionfinish(session: pytest.Session) -> None:
    state = session.config.stash.get(_state_key, None)
    if state is None:
        return
    state.close()
    report_dir = session.config.getoption(REPORT_DIR)
    if report_dir and _collected and not hasattr(session.config, "workerinput"):
        from conformance.model.results import (
            CaseResult,
            FuzzResult,
            ImplementationInfo,
            ImplementationRun,
        )
        from conformance.session import ReportWriter, finish_elsewhere

        runs = [
            ImplementationRun(
                ImplementationInfo(**info),
                [CaseResult.from_json(r) for r in results],
                fuzz=[FuzzResult.from_json(r) for r in fuzz],
            )
            for info, results, fuzz in _collected.values()
        ]
        finish_elsewhere(runs, {"source": "pytest"}, [ReportWriter(Path(report_dir), _quiet)])


def _quiet(*args: Any, **kwargs: Any) -> None:
    """pytest prints its own summary: the report writer says nothing."""
