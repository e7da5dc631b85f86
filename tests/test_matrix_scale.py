"""`conformance matrix` at scale: results cached by what they depend on (each part of the key
misses when it changes), implementations in worker processes (the same results as one after
the other), CI jobs' results directories merged into the one matrix a single run makes, and
progress with the time left. Light fake implementations on a slice of the corpus keep it fast."""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import conformance.tools.matrix as matrix_module
import conformance.tools.matrix_jobs as jobs_module
import conformance.tools.matrix_keys as keys_module
import conformance.tools.matrix_targets as targets_module
from conformance.adapters.adapter import Adapter
from conformance.cli.main import main
from conformance.errors import UsageError
from conformance.model.results import ImplementationInfo, Verdict
from conformance.reports import FORMATS
from conformance.session.events import (
    Finished,
    ImplementationStarted,
    Progress,
    Started,
)
from conformance.session.orchestrator import Job, Session, SessionSettings
from conformance.tools.bench_figures import BenchSettings
from conformance.tools.ecosystem import render_ecosystem
from conformance.tools.matrix import Matrix, MatrixSettings, run_matrix
from conformance.tools.matrix_codec import decode, encode
from conformance.tools.matrix_keys import implementation_material
from conformance.tools.matrix_progress import MatrixProgress
from conformance.tools.matrix_store import read
from conformance.tools.matrix_targets import cached_targets
from conformance.tools.matrix_worker import WorkerPool
from conformance.transport.spec import parse_impl

from .helpers import bundled_corpus

NO_FLUSH = Adapter(
    "no-flush",
    "python:tests.fakes.broken_impls:NoFlush",
    "a normalizer that never flushes",
    "nothing to install",
    module="tests.fakes.broken_impls",
)
LEAKS = Adapter(
    "leaks",
    "python:tests.fakes.broken_impls:LeaksOrphanClose",
    "a normalizer that shows an orphan close tag",
    "nothing to install",
    module="tests.fakes.broken_impls",
)
MISSING = Adapter(
    "missing",
    "python:tests.fakes.broken_impls:NoFlush",
    "a library that is not installed",
    "pip install nothing-of-the-kind",
    module="nothing_of_the_kind_installed",
)
TINY_BENCH = BenchSettings(
    document_size=2000, chunk_sizes=(4,), growth_sizes=(2000, 20000), repeats=1
)
quiet: Callable[..., None] = lambda *a, **k: None  # noqa: E731


def use_adapters(monkeypatch: pytest.MonkeyPatch, adapters: tuple[Adapter, ...]) -> None:
    """The matrix of `adapters` only, on two taxonomies of the corpus."""
    corpus = bundled_corpus()
    cases = tuple(case for case in corpus.cases if case.taxonomy.startswith(("FLUSH.", "PLAIN.")))
    monkeypatch.setattr(matrix_module, "load_corpus", lambda dirs: replace(corpus, cases=cases))
    monkeypatch.setattr(matrix_module, "ADAPTERS", adapters)


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Two fake adapters and one whose library is missing."""
    use_adapters(monkeypatch, (NO_FLUSH, LEAKS, MISSING))
    yield


def settings(tmp_path: Path, **changes: Any) -> MatrixSettings:
    base = MatrixSettings(
        report_dir=None,
        expectations_dir=tmp_path / "expectations",
        bench=None,
        cache_dir=tmp_path / "cache",
    )
    return replace(base, **changes)


def comparable(matrix: Matrix) -> dict[str, Any]:
    """Everything a matrix shows but the session's own clock (when it began, how long)."""
    run = matrix.run
    run.started, run.duration = "T", 0.0
    return {
        "run": run.to_json(),
        "reports": {module.FILENAME: module.render(run) for module in FORMATS},
        "page": render_ecosystem(matrix),
        "fingerprints": [
            json.dumps(e.fingerprint and e.fingerprint.to_json()) for e in matrix.entries
        ],
    }


def without_clocks(value: Any) -> Any:
    """Results without the figures that time things (start, fingerprint seconds)."""
    if isinstance(value, dict):
        return {
            k: without_clocks(v) for k, v in value.items() if k not in ("start_seconds", "seconds")
        }
    if isinstance(value, list):
        return [without_clocks(v) for v in value]
    return value


@pytest.mark.slow
def test_stored_objects_come_back_equal(registry: None, tmp_path: Path) -> None:
    first = run_matrix(settings(tmp_path, bench=TINY_BENCH), echo=quiet)
    entry = first.entries[1]
    for value in (entry.run.results, entry.fingerprint, entry.growth, entry.bench, entry.run.info):
        assert decode(json.loads(json.dumps(encode(value)))) == value
    assert entry.bench is not None and entry.growth is not None


@pytest.mark.slow
def test_a_second_run_is_served_from_the_cache_with_the_same_reports(
    registry: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cold = run_matrix(settings(tmp_path), echo=quiet)
    assert [e.run.info.label for e in cold.entries] == ["reference", "no-flush", "leaks"]
    assert [a.label for a, _ in cold.skipped] == ["missing"]
    assert any(r.verdict == Verdict.FAIL for r in cold.entries[1].run.results)

    def never(*args: Any) -> Any:
        raise AssertionError("a cached implementation was started")

    monkeypatch.setattr(jobs_module, "open_task", never)
    monkeypatch.setattr(WorkerPool, "begin", never)
    lines: list[str] = []
    warm = run_matrix(settings(tmp_path), echo=lambda text="", **k: lines.append(str(text)))
    assert comparable(warm) == comparable(cold)
    assert "skipped missing: " in "\n".join(lines)


@pytest.mark.slow
def test_expectation_files_apply_to_cached_results(registry: None, tmp_path: Path) -> None:
    lock = settings(tmp_path, update_expectations=True, expectations_out=tmp_path / "expectations")
    monkeypatch_rules = tmp_path / "divergences.yaml"
    monkeypatch_rules.write_text(
        "no-flush:\n  - {id: nf, class: text-dropped, reason: never flushes}\n"
        "leaks:\n  - {id: lk, class: delimiter-shown, reason: shows orphans}\n",
        "utf-8",
    )
    original = matrix_module.DIVERGENCES
    matrix_module.DIVERGENCES = monkeypatch_rules
    try:
        run_matrix(lock, echo=quiet)
    finally:
        matrix_module.DIVERGENCES = original
    fresh = run_matrix(settings(tmp_path, cache_dir=None), echo=quiet)
    cached = run_matrix(settings(tmp_path), echo=quiet)
    assert any(r.verdict == Verdict.XFAIL for r in fresh.entries[1].run.results)
    # Two runs: their clocks differ, their verdicts and expectations do not.
    assert without_clocks(comparable(cached)["run"]) == without_clocks(comparable(fresh)["run"])


def _keys(tmp_path: Path, adapters: tuple[Adapter, ...] = (NO_FLUSH,), **kw: Any) -> dict[str, str]:
    cases = kw.pop("cases", bundled_corpus().cases[:50])
    stored, _ = cached_targets(cases, adapters, kw.pop("timeout", 60.0), None)
    return {label: entry.key for label, entry in stored.items()}


def test_each_part_of_the_key_misses_when_it_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = _keys(tmp_path)
    assert base == _keys(tmp_path)
    # The corpus: a case more, or a case changed.
    cases = bundled_corpus().cases
    assert _keys(tmp_path, cases=cases[:51]).keys() == base.keys()
    assert all(_keys(tmp_path, cases=cases[:51])[k] != base[k] for k in base)
    edited = (replace(cases[0], title=cases[0].title + "!"), *cases[1:50])
    assert all(_keys(tmp_path, cases=edited)[k] != base[k] for k in base)
    # The request timeout, which decides TIMEOUT verdicts.
    assert _keys(tmp_path, timeout=5.0)["no-flush"] != base["no-flush"]
    # The label and the spec.
    renamed = replace(NO_FLUSH, label="other")
    assert _keys(tmp_path, (renamed,))["other"] != base["no-flush"]
    respec = replace(NO_FLUSH, spec="python:tests.fakes.broken_impls:LeaksOrphanClose")
    assert _keys(tmp_path, (respec,))["no-flush"] != base["no-flush"]
    # The harness.
    monkeypatch.setattr(targets_module, "harness_digest", lambda: "another harness")
    assert all(_keys(tmp_path)[k] != base[k] for k in base)
    monkeypatch.undo()
    # The installed version of a library the implementation imports.
    monkeypatch.setattr(keys_module, "distributions", lambda tops: {"somelib": "2.0"})
    assert _keys(tmp_path)["no-flush"] != base["no-flush"]


def test_the_key_holds_the_implementation_source_and_libraries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "scalepkg"
    package.mkdir()
    (package / "__init__.py").write_text("", "utf-8")
    (package / "helper.py").write_text("X = 1\n", "utf-8")
    (package / "impl.py").write_text("import yaml\nfrom .helper import X\n", "utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    spec = "python:scalepkg.impl:Impl"
    material = implementation_material("impl", spec, 60.0)
    assert set(material["sources"]) == {"scalepkg.impl", "scalepkg.helper"}
    assert "pyyaml" in material["distributions"]
    (package / "helper.py").write_text("X = 2\n", "utf-8")
    assert implementation_material("impl", spec, 60.0) != material
    (package / "impl.py").write_text("import nothing_of_the_kind_installed\n", "utf-8")
    found = implementation_material("impl", spec, 60.0)["distributions"]
    assert found == {"module nothing_of_the_kind_installed": "absent"}
    script = tmp_path / "impl.mjs"
    script.write_text("// one\n", "utf-8")
    command = f"cmd:node {script}"
    before = implementation_material("cmd", command, 60.0)
    (tmp_path / "helper.mjs").write_text("// a sibling module\n", "utf-8")
    assert implementation_material("cmd", command, 60.0) != before


@pytest.mark.slow
def test_parallel_workers_give_what_one_after_the_other_gives(
    registry: None, tmp_path: Path
) -> None:
    serial = run_matrix(settings(tmp_path, cache_dir=None, jobs=1), echo=quiet)
    parallel = run_matrix(settings(tmp_path, cache_dir=None, jobs=2), echo=quiet)
    assert without_clocks(comparable(parallel)["run"]) == without_clocks(comparable(serial)["run"])
    assert [a.label for a, _ in parallel.skipped] == ["missing"]
    for one, other in zip(serial.entries, parallel.entries, strict=True):
        assert one.fingerprint is not None and other.fingerprint is not None
        assert one.fingerprint.axes == other.fingerprint.axes


@pytest.mark.slow
def test_ci_jobs_results_merge_into_the_matrix_of_one_run(registry: None, tmp_path: Path) -> None:
    one = run_matrix(settings(tmp_path, jobs=2), echo=quiet)
    shards = []
    for adapter in (NO_FLUSH, LEAKS, MISSING):
        out = tmp_path / f"shard-{adapter.label}"
        run_matrix(settings(tmp_path, only=[adapter.label], results_out=out), echo=quiet)
        shards.append(out)
    merged = run_matrix(settings(tmp_path, cache_dir=None, merge=shards), echo=quiet)
    assert comparable(merged) == comparable(one)
    # A job that ran another --bench cannot be merged as if it had not.
    with pytest.raises(UsageError, match="another --bench"):
        run_matrix(settings(tmp_path, merge=shards, bench=TINY_BENCH), echo=quiet)


@pytest.mark.slow
def test_measurements_are_added_to_a_cached_entry(registry: None, tmp_path: Path) -> None:
    only = settings(tmp_path, only=["no-flush"])
    run_matrix(only, echo=quiet)
    measured = run_matrix(replace(only, bench=TINY_BENCH), echo=quiet)
    assert measured.entries[1].growth is not None
    entries = {p.name.split("-")[0]: read(p) for p in (tmp_path / "cache").glob("*.json.gz")}
    stored = entries["no"]
    assert stored is not None and "corpus" in stored.seconds and "growth" in stored.seconds
    assert len(stored.measured) == 1


def test_progress_says_what_runs_and_the_time_left() -> None:
    now = [0.0]
    out = io.StringIO()
    progress = MatrixProgress(2, out, interval=3600, clock=lambda: now[0])
    progress.expect({"a": False, "b": False, "c": False, "d": True})
    progress.started(Started(["a", "b", "c", "d"], 400))
    info = ImplementationInfo("a", "a", "1", "python", {}, "python:a:A")
    progress.implementation_started(ImplementationStarted(info, 100))
    progress.phase("d", "cached")
    now[0] = 10.0
    progress.progress(Progress("a", 50, 100, 50, 400))
    # a: 50 checks left at 0.2 s; b and c wait with 100 checks each; two workers.
    assert progress.estimate() == pytest.approx((50 * 0.2 + 2 * 100 * 0.2) / 2)
    assert "a 50/100 checks" in progress.status() and "about" in progress.status()
    now[0] = 20.0
    progress.progress(Progress("a", 100, 100, 100, 400))
    progress.phase("a", "fingerprint")
    assert "a fingerprint" in progress.status()
    progress.phase("a", "done")
    progress.finished(Finished(matrix_module.Run("", "", "", []), 0))
    text = out.getvalue()
    assert "1 served from the cache, 3 to run (2 at a time)" in text
    assert "d: served from the cache" in text
    assert "a: done in 20 s (100 checks); about 20 s left" in text  # 2 x 100 checks at 0.2 s


def test_the_estimate_weighs_what_waits_by_its_cost() -> None:
    """A client over HTTP (cost 10) runs first at 1 s per check: a parser in process waiting
    with as many checks is estimated at a tenth of that, not at the client's pace."""
    now = [0.0]
    progress = MatrixProgress(1, io.StringIO(), interval=3600, clock=lambda: now[0])
    progress.expect({"client": False, "parser": False}, {"client": 10.0, "parser": 1.0})
    progress.started(Started(["client", "parser"], 200))
    info = ImplementationInfo("client", "client", "1", "python", {}, "python:a:A")
    progress.implementation_started(ImplementationStarted(info, 100))
    now[0] = 50.0
    progress.progress(Progress("client", 50, 100, 50, 200))
    # The client: 50 checks left at its own 1 s; the parser: 100 checks at 0.1 s.
    assert progress.estimate() == pytest.approx(50 * 1.0 + 100 * 0.1)
    now[0] = 100.0
    progress.progress(Progress("client", 100, 100, 100, 200))
    progress.phase("client", "done")
    assert progress.estimate() == pytest.approx(100 * 0.1)


def test_the_command_line_caches_and_says_so(registry: None, tmp_path: Path) -> None:
    arguments = ["matrix", "--adapter", "no-flush", "--bench", "none", "-j", "1"]
    arguments += ["--cache-dir", str(tmp_path / "cache"), "--report-dir", str(tmp_path / "r")]
    first = CliRunner().invoke(main, arguments)
    assert first.exit_code == 1, first.output  # no-flush fails, with no expectation file
    assert "no-flush: done in" in first.output
    second = CliRunner().invoke(main, arguments)
    assert "no-flush: served from the cache" in second.output
    # The fingerprint reaches the results document (and so a store and the site), served
    # from the cache too: each option's value found, and that it is the one declared.
    found = json.loads((tmp_path / "r" / "results.json").read_text())["implementations"]
    assert [entry["label"] for entry in found] == ["reference", "no-flush"]
    for entry in found:
        assert entry["fingerprint"]["delimiters"] == {"follows": "think", "agrees": True}
        assert set(entry["fingerprint"]) >= {"sections", "unclosed_at_end", "tool_markers"}
    bad = CliRunner().invoke(main, ["matrix", "--merge", str(tmp_path), "--adapter", "no-flush"])
    assert bad.exit_code == 2


def test_the_split_workflow_of_the_docs_names_real_adapters_and_options() -> None:
    import re

    import yaml

    from conformance.adapters import ADAPTERS
    from conformance.cli.implementations import matrix as matrix_command

    doc = (Path(__file__).parent.parent / "docs" / "ci.md").read_text("utf-8")
    section = doc[doc.index("## The ecosystem matrix, cached and split across jobs") :]
    block = re.search(r"```yaml\n(.*?)```", section, re.S)
    assert block is not None
    workflow = yaml.safe_load(block.group(1))
    include = workflow["jobs"]["adapters"]["strategy"]["matrix"]["include"]
    labels = {a.label for a in ADAPTERS}
    assert all(set(job["adapters"].split()) <= labels for job in include)
    assert workflow["jobs"]["merge"]["needs"] == "adapters"
    runs = [
        step["run"]
        for job in workflow["jobs"].values()
        for step in job["steps"]
        if "conformance matrix" in step.get("run", "")
    ]
    flags = {flag for run in runs for flag in re.findall(r"(--[a-z-]+)", run)}
    known = {option for param in matrix_command.params for option in param.opts}
    assert {"--results-out", "--merge", "--docs", "--adapter"} <= flags <= known


def test_the_costliest_jobs_start_first_and_results_keep_their_order() -> None:
    """With two workers, a long job started last would run alone while the other waits."""
    started: list[str] = []

    @dataclass
    class Handle:
        info: ImplementationInfo

        def close(self) -> None:
            pass

    def job(label: str, cost: float) -> Job[Handle]:
        def connect() -> Handle:
            started.append(label)
            return Handle(ImplementationInfo(label, label, "1", "python", {}, "reference"))

        return Job(
            parse_impl(f"{label}=reference"), 0, lambda handle, context: None, connect, cost=cost
        )

    jobs = [job("cheap", 1.0), job("costly", 10.0), job("served", 0.0), job("middling", 5.0)]
    finished = Session(jobs, SessionSettings(jobs=2), [], echo=quiet).run()
    # Which two start first is fixed (the two costliest); in what order they call is not.
    assert sorted(started[:2]) == ["costly", "middling"]
    assert started[2:] == ["cheap", "served"]
    labels = [run.info.label for run in finished.run.implementations]
    assert labels == ["cheap", "costly", "served", "middling"]


@pytest.mark.slow
def test_reports_of_the_same_inputs_are_kept_and_any_change_rewrites_them(
    registry: None, tmp_path: Path
) -> None:
    """A matrix served whole from the cache whose reports are already written from the same
    entries, expectation files and report writers keeps them (rendering a full matrix's takes
    over a minute), from the first run after the one that judged them; an edited report, or
    a changed expectation file, is written again. A run that judged something never keeps."""
    reports = tmp_path / "reports"
    matrix_settings = settings(tmp_path, report_dir=reports)

    def run() -> list[str]:
        said: list[str] = []
        run_matrix(matrix_settings, echo=lambda text="", **_: said.append(str(text)))
        return said

    # Judged, each entry stored: the reports are stamped with what they were made from.
    assert any(line.startswith("wrote ") for line in run())
    names = [module.FILENAME for module in FORMATS] + [".conformance-inputs.json"]
    written = {name: (reports / name).stat().st_mtime_ns for name in names}
    said = run()
    assert [line for line in said if "kept the reports" in line]
    assert not any(line.startswith("wrote ") for line in said)
    assert {name: (reports / name).stat().st_mtime_ns for name in names} == written
    (reports / "report.md").write_text("edited by hand\n", "utf-8")
    assert any(line.startswith("wrote ") for line in run())
    assert "edited by hand" not in (reports / "report.md").read_text("utf-8")
    assert [line for line in run() if "kept the reports" in line]
    (tmp_path / "expectations").mkdir(exist_ok=True)
    (tmp_path / "expectations" / "leaks.yaml").write_text("{}\n", "utf-8")
    assert any(line.startswith("wrote ") for line in run())
    # An entry gone from the cache is judged again: same key, same digest, but judged.
    for entry in (tmp_path / "cache").glob("leaks-*"):
        entry.unlink()
    said = run()
    assert any(line.startswith("wrote ") for line in said)
    assert not [line for line in said if "kept the reports" in line]
