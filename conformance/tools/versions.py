"""An adapter judged at a chosen release of its library, in that release's own environment
(tools/envs.py): one case for `conformance bisect`, the whole corpus for `conformance
versions`.

    probe = judge_case(adapter("litellm-ollama"), "1.80.0", "KLQL", checks=None, echo=print)
    row = judge_corpus(adapter("litellm-ollama"), "1.80.0", echo=print)

The adapter reports the version it loaded (`installed_version`); a release whose adapter
reports another one is refused, so a verdict is never put on the wrong release.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from conformance.adapters import EXPECTATIONS_DIR
from conformance.adapters.adapter import Adapter
from conformance.contracts import all_checks
from conformance.corpus.cases import bundled_cases_dir, load_corpus
from conformance.corpus.expectations import load_expected_failures
from conformance.engine.runner import run_implementation
from conformance.errors import ImplementationStartError, UsageError
from conformance.model.results import CaseResult
from conformance.tools.bisect import Probe
from conformance.tools.envs import (
    EnvBuildError,
    ensure_env,
    package_of,
    versioned_label,
    versioned_spec,
)
from conformance.transport.connections import Connection
from conformance.transport.impls import connect
from conformance.transport.spec import parse_impl

#: Seconds for each request: a fresh environment imports its library cold.
TIMEOUT = 60.0


class WrongVersion(ImplementationStartError):
    """The adapter loaded another release than the one asked for (exit status 2)."""


@dataclass(slots=True)
class CorpusRow:
    """The corpus at one release: counts of verdicts, judged against the adapter's lock."""

    version: str
    counts: dict[str, int] = field(default_factory=dict)
    skipped: str = ""
    spec: str = ""
    seconds: float = 0.0


def open_at(
    adapter: Adapter, version: str, *, echo: Callable[[str], None], rebuild: bool = False
) -> tuple[Connection, str]:
    """A started connection to `adapter` run in the environment of `version`, and its spec.
    EnvBuildError, ImplementationStartError or WrongVersion when there is none."""
    env = ensure_env(package_of(adapter), version, echo=echo, rebuild=rebuild)
    spec = versioned_spec(adapter, env)
    connection = connect(parse_impl(f"{versioned_label(adapter, version)}={spec}"), timeout=TIMEOUT)
    loaded = connection.info.version
    if loaded != version:
        connection.close()
        label = versioned_label(adapter, version)
        raise WrongVersion(label, f"asked for {version}, the adapter loaded {loaded}")
    return connection, spec


def case_results(
    connection: Connection, case: str, checks: Sequence[str] | None
) -> list[CaseResult]:
    """The results of case `case` (under the checks given, or all) on `connection`: the case
    of that ID, or the forms derived from the written case of that ID under the options the
    implementation declares (`ID~form`)."""
    cases = load_corpus([bundled_cases_dir()]).cases
    run = run_implementation(
        connection,
        cases,
        checks=checks,
        wanted=lambda case_id, _check: case_id == case or case_id.startswith(f"{case}~"),
    )
    return run.results


def judge_case(
    adapter: Adapter,
    version: str,
    case: str,
    checks: Sequence[str] | None,
    *,
    echo: Callable[[str], None],
) -> Probe:
    """The verdicts of `case` at `version`, or a skipped probe saying why there are none."""
    try:
        connection, _ = open_at(adapter, version, echo=echo)
    except (EnvBuildError, ImplementationStartError, WrongVersion) as error:
        return Probe(version, skipped=str(error))
    try:
        results = case_results(connection, case, checks)
    finally:
        connection.close()
    if not results:
        raise UsageError(f"--case {case}: no such case runs on {adapter.label}")
    # A check's verdict, named with the derived form's ID where the case runs as forms.
    return Probe(version, {_key(r, case): str(r.verdict) for r in results})


def _key(result: CaseResult, case: str) -> str:
    return result.check if result.case == case else f"{result.case} {result.check}"


def judge_corpus(adapter: Adapter, version: str, *, echo: Callable[[str], None]) -> CorpusRow:
    """The whole corpus at `version`, judged against the adapter's lock (expectations/)."""
    import time

    started = time.monotonic()
    row = CorpusRow(version)
    try:
        connection, row.spec = open_at(adapter, version, echo=echo)
    except (EnvBuildError, ImplementationStartError, WrongVersion) as error:
        row.skipped = str(error)
        return row
    expected = load_expected_failures(EXPECTATIONS_DIR / f"{adapter.label}.yaml")
    try:
        run = run_implementation(
            connection,
            load_corpus([bundled_cases_dir()]).cases,
            checks=all_checks(),
            expected_failures=expected,
        )
    finally:
        connection.close()
    for result in run.results:
        row.counts[str(result.verdict)] = row.counts.get(str(result.verdict), 0) + 1
    row.seconds = time.monotonic() - started
    return row


def reproduce(adapter: Adapter, version: str, case: str, check: str | None) -> str:
    """The command that judges `case` at `version` again, on any machine: the environment is
    built there (or reused) by `conformance env`."""
    words = ["conformance", "run", "--impl", f'"$(conformance env {adapter.label} {version})"']
    words += ["--id", shlex.quote(case)]
    if check:
        words += ["--check", check]
    return " ".join(words)
