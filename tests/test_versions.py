"""Releases of a library, each in its own environment: the release lists, the environments'
contents and specs, the bisect search, and (slow) an adapter judged at an older release."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from conformance.adapters import ADAPTERS, adapter
from conformance.adapters.adapter import NODE_DIR
from conformance.cli.main import main
from conformance.tools import envs
from conformance.tools.bisect import BoundSkipped, Probe, bisect_releases
from conformance.tools.envs import Env, package, package_of, python_requirements, versioned_spec
from conformance.tools.releases import parse_npm, parse_pip

from .helpers import ROOT

PIP_OUTPUT = """litellm (1.110.2)
Available versions: 1.110.2, 1.9.0, 1.10.0, 1.77.2.post1, 1.80.0rc1, 1.0
  INSTALLED: 1.110.2
  LATEST:    1.110.2
"""


def test_pip_releases_are_final_and_ordered_by_version_not_text() -> None:
    assert parse_pip(PIP_OUTPUT) == ["1.0", "1.9.0", "1.10.0", "1.77.2.post1", "1.110.2"]
    assert parse_pip("ERROR: No matching distribution found for nothing-here") == []


def test_npm_releases_leave_out_prereleases() -> None:
    listed = json.dumps(["6.0.10", "6.0.9", "7.0.0-beta.1", "5.2.0", "not a version"])
    assert parse_npm(listed) == ["5.2.0", "6.0.9", "6.0.10"]
    assert parse_npm('"1.0.0"') == ["1.0.0"]
    assert parse_npm("") == []


def test_every_adapter_library_has_a_versioned_package() -> None:
    for candidate in ADAPTERS:
        if candidate.library in envs.LIBRARY_PACKAGES:
            assert package_of(candidate).name in envs.PACKAGES


def test_an_env_pins_the_library_in_place_of_its_extra_bound() -> None:
    wanted = python_requirements(package("pydantic-ai-slim"), "2.50.0")
    assert wanted[-1] == "pydantic-ai-slim[openai]==2.50.0"
    assert not any(line.startswith("pydantic-ai-slim>=") for line in wanted)
    assert any(line.startswith("click") for line in wanted)  # the runtime dependencies


def test_an_unknown_package_is_a_usage_error() -> None:
    result = CliRunner().invoke(
        main, ["bisect", "--impl", "litellm", "--package", "nothing-here", "--case", "X"]
    )
    assert result.exit_code == 2
    assert "no adapter drives it" in result.output


def test_an_unknown_adapter_is_a_usage_error() -> None:
    result = CliRunner().invoke(main, ["bisect", "--impl", "nobody", "--case", "X"])
    assert result.exit_code == 2
    assert "no adapter is labelled" in result.output


def test_a_python_adapter_runs_in_its_env_as_a_protocol_server(tmp_path: Path) -> None:
    env = Env(package("litellm"), "1.80.0", tmp_path)
    spec = versioned_spec(adapter("litellm-ollama"), env)
    assert spec == (
        f"cmd:{tmp_path}/bin/python -m conformance.transport.isolated "
        "conformance.adapters.litellm:OllamaChat"
    )


def test_the_node_adapter_runs_a_copy_beside_the_release(tmp_path: Path) -> None:
    env = Env(package("ai"), "6.0.10", tmp_path)
    spec = versioned_spec(adapter("vercel-ai-start-with-reasoning"), env)
    assert spec == f"cmd:node {tmp_path}/vercel-ai.mjs --start-with-reasoning"
    # With the protocol module it imports by relative path.
    for name in ("vercel-ai.mjs", "protocol.mjs"):
        assert (tmp_path / name).read_bytes() == (NODE_DIR / name).read_bytes()


# --- the search ------------------------------------------------------------------------------

VERSIONS = [f"1.{n}" for n in range(20)]


def judged(first_fixed: int, broken: frozenset[int] = frozenset()):  # type: ignore[no-untyped-def]
    calls: list[str] = []

    def judge(version: str) -> Probe:
        calls.append(version)
        index = VERSIONS.index(version)
        if index in broken:
            return Probe(version, skipped="pip failed")
        return Probe(version, {"stream": "PASS" if index >= first_fixed else "FAIL"})

    return judge, calls


@pytest.mark.parametrize("first", [1, 7, 13, 19])
def test_the_search_finds_the_first_changed_release_in_few_probes(first: int) -> None:
    judge, calls = judged(first)
    found = bisect_releases(VERSIONS, judge)
    assert (found.last_before, found.first_after) == (VERSIONS[first - 1], VERSIONS[first])
    assert found.changed_checks() == ["stream"]
    assert len(calls) <= 2 + 5  # the bounds, then log2(20) rounded up
    assert len(set(calls)) == len(calls)


def test_a_release_that_does_not_build_is_skipped_for_its_neighbour() -> None:
    judge, calls = judged(7, broken=frozenset({9, 4}))
    found = bisect_releases(VERSIONS, judge)
    assert (found.last_before, found.first_after) == ("1.6", "1.7")
    assert "1.9" in calls and found.probe("1.9").skipped == "pip failed"


def test_when_every_release_between_is_skipped_the_range_is_reported() -> None:
    judge, _ = judged(7, broken=frozenset({5, 6, 7}))
    found = bisect_releases(VERSIONS, judge)
    assert (found.last_before, found.first_after) == ("1.4", "1.8")
    assert found.untested == ["1.5", "1.6", "1.7"]


def test_bounds_judged_alike_are_no_change() -> None:
    judge, calls = judged(100)
    found = bisect_releases(VERSIONS, judge)
    assert not found.changed and calls == ["1.0", "1.19"]


def test_a_bound_that_cannot_be_judged_stops_the_search() -> None:
    judge, _ = judged(3, broken=frozenset({0}))
    with pytest.raises(BoundSkipped, match=r"1\.0: pip failed"):
        bisect_releases(VERSIONS, judge)


def test_a_probe_summarises_its_verdicts() -> None:
    assert Probe("1", {"stream": "FAIL"}).summary() == "FAIL"
    assert Probe("1", {"a": "FAIL", "b": "PASS", "c": "PASS"}).summary() == "1 FAIL, 2 PASS"
    assert Probe("1", skipped="x").summary() == "skipped"


def test_the_command_that_reproduces_a_verdict_builds_its_environment_where_it_runs() -> None:
    from conformance.tools.versions import reproduce

    command = reproduce(adapter("vercel-ai"), "7.0.122", "FBME~text", "stream")
    assert command == (
        "conformance run --impl \"$(conformance env vercel-ai 7.0.122)\" --id 'FBME~text'"
        " --check stream"
    )
    assert command in (ROOT / "docs" / "versions.md").read_text("utf-8")


# --- a real environment -----------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not on PATH")
def test_the_node_adapter_judges_a_case_at_an_older_release_of_ai() -> None:
    """Builds (or reuses) the environment of `ai` 6.0.0 with npm and judges cases there: text
    held back at the end of a stream is lost before 7.0.123 (docs/versions.md), and a written
    case's ID stands for its derived forms."""
    from conformance.tools.versions import judge_case

    probe = judge_case(adapter("vercel-ai"), "6.0.0", "FBME~text", ["stream"], echo=print)
    assert probe.verdicts == {"stream": "FAIL"}, probe.skipped
    forms = judge_case(adapter("vercel-ai"), "6.0.0", "DNTX", None, echo=print)
    assert forms.verdicts and all(key.startswith("DNTX~") for key in forms.verdicts)


@pytest.mark.slow
def test_a_python_env_holds_the_release_asked_for() -> None:
    """Builds (or reuses) the environment of pydantic-ai-slim at an older release and judges
    one case in it, the adapter reporting that release."""
    from conformance.tools.versions import open_at

    connection, spec = open_at(adapter("pydantic-ai"), "2.60.0", echo=print)
    try:
        assert connection.info.version == "2.60.0"
        assert spec.startswith("cmd:") and sys.executable not in spec
    finally:
        connection.close()


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not on PATH")
def test_bisect_says_when_nothing_changed_or_the_case_is_unknown() -> None:
    """Between ai 6.0.0 and 6.0.150 the held text is lost alike: no change, exit 2; a case
    that does not exist is a usage error, also exit 2."""
    bounds = ["--good", "6.0.0", "--bad", "6.0.150"]
    same = CliRunner().invoke(
        main, ["bisect", "--impl", "vercel-ai", "--case", "FBME~text", "--check", "stream", *bounds]
    )
    assert same.exit_code == 2, same.output
    assert "no change found: case FBME~text, check stream is FAIL at 6.0.0" in same.output
    unknown = CliRunner().invoke(main, ["bisect", "--impl", "vercel-ai", "--case", "NOPE", *bounds])
    assert unknown.exit_code == 2
    assert "--case NOPE: no such case runs on vercel-ai" in unknown.output
    wrong = CliRunner().invoke(
        main, ["bisect", "--impl", "vercel-ai", "--case", "X", "--good", "0.0.0"]
    )
    assert wrong.exit_code == 2 and "0.0.0 is not a release of ai" in wrong.output


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not on PATH")
def test_three_releases_in_a_store_make_one_history_with_the_real_change(tmp_path: Path) -> None:
    """The results site's history over library versions, from real runs: `ai` 6.0.0, 7.0.122
    and 7.0.123 judged on FBME (text held back at the end of a stream, docs/versions.md) into
    one store; the site shows one implementation whose 7.0.123 fixes the stream checks, and
    `conformance diff` of the last two runs says so."""
    store = tmp_path / "store.sqlite"
    for release in ("6.0.0", "7.0.122", "7.0.123"):
        impl = CliRunner().invoke(main, ["env", "vercel-ai", release]).output.strip()
        assert impl.startswith(f"vercel-ai@{release}=cmd:"), impl
        report = tmp_path / release
        ran = CliRunner().invoke(
            main,
            [
                "run",
                "--impl",
                impl,
                "--id",
                "FBME",
                "--store",
                str(store),
                "--report-dir",
                str(report),
                "--no-growth",
            ],
        )
        assert ran.exit_code == (0 if release == "7.0.123" else 1), ran.output
    built = CliRunner().invoke(main, ["site", "--store", str(store), "--out", str(tmp_path / "s")])
    assert built.exit_code == 0, built.output
    assert [p.name for p in (tmp_path / "s" / "impl").glob("vercel-ai*")] == ["vercel-ai.html"]
    page = (tmp_path / "s" / "impl" / "vercel-ai.html").read_text("utf-8")
    assert "Pass share over library versions" in page
    for release in ("6.0.0", "7.0.122", "7.0.123"):
        assert f"<td>{release}</td>" in page
    assert "0 regressed, 3 fixed" in page
    diff = CliRunner().invoke(
        main,
        [
            "diff",
            str(tmp_path / "7.0.122" / "results.json"),
            str(tmp_path / "7.0.123" / "results.json"),
        ],
    )
    assert "0 regressed, 3 fixed" in diff.output and "only in the" not in diff.output
