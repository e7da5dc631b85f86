"""Layer 8 (applications): the pytest plugin: `pytest --conformance-impl SPEC` runs the corpus
as tests.

One test per (implementation, case, check), named `conformance[LABEL]::ID-slug[check]` and
marked `conformance` and `conformance_<category>`, so `-k`, `-m`, `-x`, `--junitxml` and
pytest-xdist work as usual. The harness modules are imported only when the plugin is used.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from ._items import ConformanceSuite
from ._state import (
    CASES,
    CHECK,
    EVERY_FAILURE,
    EXPECTATIONS,
    FUZZ,
    FUZZ_PROPERTY,
    GROUP,
    IMPL,
    MIN_JUDGED,
    OPTIONS,
    REPORT_DIR,
    RESULT_PROPERTY,
    SIGNATURE_PROPERTY,
    STATE,
    TIMEOUT,
    State,
    marker,
)

# Its API is what it adds to pytest (options, markers, one test per case and check), not
# names to import (docs/pytest-plugin.md).
__all__: list[str] = []


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
    group.addoption(
        MIN_JUDGED,
        type=float,
        default=None,
        metavar="PERCENT",
        help="fail the session when an implementation judged less than this share of the "
        "checks that apply to it (default 90; 0 accepts any, even nothing judged)",
    )
    group.addoption(
        EVERY_FAILURE,
        action="store_true",
        help="list every failing conformance test in pytest's failures and short summary "
        "(default: the first of each bug signature; the others are counted)",
    )
    parser.addini(
        "conformance_impl", "implementations to run the corpus against", type="linelist", default=[]
    )


#: A case file names its category on a line of its own; reading that line is enough to
#: register the markers in every pytest run, without loading the corpus.
_CATEGORY_LINE = re.compile(r"^category:\s*[\"']?([\w-]+)", re.MULTILINE)


def _bundled_categories() -> list[str]:
    from conformance.corpus.cases import bundled_cases_dir, case_files

    found = set()
    for path in case_files([bundled_cases_dir()]):
        found.update(_CATEGORY_LINE.findall(path.read_text("utf-8")))
    return sorted(found)


def pytest_configure(config: pytest.Config) -> None:
    # Markers are registered in every run, so `pytest --markers` lists them and
    # `--strict-markers` accepts them whether or not --conformance-impl is given.
    config.addinivalue_line("markers", "conformance: a conformance-suite case")
    config.addinivalue_line("markers", "conformance_fuzz: a fuzzing property (--conformance-fuzz)")
    for category in _bundled_categories():
        config.addinivalue_line("markers", f"{marker(category)}: cases of {category}")
    if not (config.getoption(IMPL) or config.getini("conformance_impl")):
        return
    # An xdist worker's failures are told apart on the controller, which sees them all.
    _worker[:] = [hasattr(config, "workerinput")]
    config.pluginmanager.register(_OneLineInShortSummary(), "conformance-short-summary")
    from conformance.contracts import all_checks
    from conformance.corpus.cases import bundled_cases_dir, load_corpus
    from conformance.errors import ConformanceError

    try:
        state = State(config)
    except ConformanceError as error:
        raise pytest.UsageError(str(error)) from None
    minimum = config.getoption(MIN_JUDGED)
    if minimum is not None and not 0 <= minimum <= 100:
        raise pytest.UsageError(f"{MIN_JUDGED} {minimum:g}: give a percentage from 0 to 100")
    state.checks = config.getoption(CHECK) or list(all_checks())
    unknown = sorted(set(state.checks) - set(all_checks()))
    if unknown:
        raise pytest.UsageError(f"{CHECK} {unknown[0]}: the checks are {', '.join(all_checks())}")
    dirs = [Path(d) for d in config.getoption(CASES)] or [bundled_cases_dir()]
    corpus = load_corpus(dirs)
    if corpus.errors:
        problems = "\n".join(str(e) for e in corpus.errors)
        raise pytest.UsageError(f"conformance case files have errors:\n{problems}")
    state.cases = list(corpus.cases)
    config.stash[STATE] = state
    for category in sorted({case.category for case in corpus.cases}):
        config.addinivalue_line("markers", f"{marker(category)}: cases of {category}")


#: Lines of a start failure shown: the message and the end of the implementation's stderr.
_START_FAILURE_LINES = 25


def pytest_sessionstart(session: pytest.Session) -> None:
    """Start every implementation once before any test: one that cannot start is one usage
    error, not a failure per test. Under xdist the controller checks; `--collect-only` and
    the workers skip it (the workers connect on first use)."""
    config = session.config
    state = config.stash.get(STATE, None)
    if state is None or config.getoption("collectonly") or hasattr(config, "workerinput"):
        return
    from conformance.errors import ConformanceError

    for spec in state.specs:
        try:
            state.connection(spec.label)
        except ConformanceError as error:
            state.close()
            lines = str(error).splitlines()
            if len(lines) > _START_FAILURE_LINES:
                lines = [*lines[: _START_FAILURE_LINES - 1], "..."]
            raise pytest.UsageError(
                "conformance: cannot start the implementation under test; no test ran.\n"
                + "\n".join(lines)
            ) from None
    if config.getoption("dist", "no") != "no":
        # Under xdist the workers run the tests with their own connections: this was a check.
        state.close()
        state.connections.clear()


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Any:
    """The session collects one suite per implementation next to the files it collects, so
    pytest counts, selects and lists the conformance tests like any others."""
    report = yield
    state = collector.config.stash.get(STATE, None)
    if state is not None and isinstance(collector, pytest.Session) and report.passed:
        report.result.extend(
            ConformanceSuite.from_parent(
                collector, name=f"conformance[{spec.label}]", nodeid=f"conformance[{spec.label}]"
            )
            for spec in state.specs
        )
    return report


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Collect results on the controlling process (also under xdist) for the reports, and
    shorten each failure of a bug signature already shown to one line."""
    if report.when != "call" and not (report.when == "setup" and report.skipped):
        return
    for name, value in report.user_properties:
        if name == SIGNATURE_PROPERTY and report.failed and not any(_worker):
            _repeats().shorten(report, str(value))
        if name in (RESULT_PROPERTY, FUZZ_PROPERTY):
            data = json.loads(str(value))
            _info, results, fuzz = _collected.setdefault(data["label"], (data["info"], [], []))
            (results if name == RESULT_PROPERTY else fuzz).append(data["result"])


#: Per implementation label: its info, its case results and its fuzz results (as JSON).
_collected: dict[str, tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]] = {}


def pytest_sessionfinish(session: pytest.Session) -> None:
    state = session.config.stash.get(STATE, None)
    if state is None:
        return
    state.close()
    if hasattr(session.config, "workerinput") or not _collected:
        return
    from conformance.engine.coverage import DEFAULT_MIN_JUDGED
    from conformance.model.results import (
        CaseResult,
        FuzzResult,
        ImplementationInfo,
        ImplementationRun,
    )
    from conformance.session.orchestrator import finish_elsewhere

    runs = [
        ImplementationRun(
            ImplementationInfo(**info),
            [CaseResult.from_json(r) for r in results],
            fuzz=[FuzzResult.from_json(r) for r in fuzz],
        )
        for info, results, fuzz in _collected.values()
    ]
    report_dir = session.config.getoption(REPORT_DIR)
    handlers = []
    if report_dir:
        from conformance.session.handlers import ReportWriter

        handlers.append(ReportWriter(Path(report_dir), _quiet))
    minimum = session.config.getoption(MIN_JUDGED)
    finished = finish_elsewhere(
        runs,
        {"source": "pytest"},
        handlers,
        min_judged=DEFAULT_MIN_JUDGED if minimum is None else minimum,
    )
    _problems[:] = finished.run.problems
    from ._failures import summary

    _summary[:] = summary(finished.run)
    if _problems and session.exitstatus == pytest.ExitCode.OK:
        # Every test passed or was skipped, yet the implementation judged too little.
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


#: What failed the session beyond its tests, for the terminal summary.
_problems: list[str] = []
#: The failures grouped by bug signature, as `conformance run` prints them.
_summary: list[str] = []
_shown: list[Any] = []
#: `[True]` in an xdist worker.
_worker: list[bool] = []


def _repeats() -> Any:
    """The one record of failure signatures shown in this process (made on first use)."""
    if not _shown:
        from ._failures import Repeats

        _shown.append(Repeats())
    return _shown[0]


class _OneLineInShortSummary:
    """Between pytest's failures and its short summary (its hook runs inside pytest's own
    summary): a conformance failure is listed there by its first line. On CI (`CI` set) and
    under -vv pytest lists the whole text of a failure there, which would print every
    failure shown twice."""

    @staticmethod
    def pytest_terminal_summary(terminalreporter: Any) -> None:
        for report in terminalreporter.stats.get("failed", ()):
            if report.nodeid.startswith("conformance[") and isinstance(report.longrepr, str):
                report.longrepr = report.longrepr.split("\n", 1)[0]


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_terminal_summary(terminalreporter: Any) -> Any:
    """Around pytest's own summary: its failures and short summary list the first failing
    test of each bug signature (unless --conformance-every-failure), then the failures
    grouped by signature close the summary, as `conformance run` prints them."""
    stats = terminalreporter.stats
    failed = stats.get("failed")
    repeats = set() if terminalreporter.config.getoption(EVERY_FAILURE) else _repeats().shown
    if failed and repeats:
        stats["failed"] = [report for report in failed if id(report) not in repeats]
    try:
        return (yield)
    finally:
        if failed is not None:
            stats["failed"] = failed
        if _summary:
            terminalreporter.write_sep("=", "conformance failures by bug signature")
            for line in _summary:
                terminalreporter.write_line(line)
        left = len([report for report in failed or () if id(report) in repeats])
        if left:
            terminalreporter.write_line(
                f"{left} more failing tests of these signatures are not listed one by one"
                f" ({EVERY_FAILURE} lists them)"
            )
        for problem in _problems:
            terminalreporter.write_line(f"conformance: {problem}", red=True)


def _quiet(*args: Any, **kwargs: Any) -> None:
    """pytest prints its own summary: the report writer says nothing."""
