"""`conformance site`: the pages built from a store, their links, sizes, badges and index
(the fast tier; tests/test_site_browser.py loads them in Chromium)."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from conformance.model.results import (
    CaseResult,
    ImplementationInfo,
    ImplementationRun,
    Run,
    Verdict,
)
from conformance.store.db import Store

from .helpers import cli

#: The budget of one page (issue 25): larger pages are split.
MAX_PAGE = 300_000

LEAK = {
    "reason": "assistant gained '</think>'",
    "chunks": [
        {"content": "<think>a</th", "reasoning": None},
        {"content": "ink>b", "reasoning": None},
    ],
    "expected": {"assistant": "b", "thinking": "a"},
    "actual": {"assistant": "</think>b", "thinking": "a"},
}


def results(broken: bool, derived: str = "") -> list[CaseResult]:
    def one(case: str, check: str, verdict: Verdict = Verdict.PASS, **more: object) -> CaseResult:
        return CaseResult(
            case + derived, case.lower(), "blocks", "BLOCK.x", "must", check, verdict,
            title=f"Case {case}", **more,  # type: ignore[arg-type]
        )  # fmt: skip

    found = [one("DNTX", "whole"), one("AAAA", "whole"), one("AAAA", "stream")]
    if broken:
        found.append(one("BBBB", "stream", Verdict.FAIL, **LEAK))
        found.append(
            one(
                "CCCC",
                "whole",
                Verdict.XFAIL,
                **LEAK,
                expectation={
                    "rule": "lib.leak",
                    "reason": "known",
                    "link": "https://example.org/1",
                },
            )
        )
    else:
        found += [one("BBBB", "stream"), one("CCCC", "whole")]
    found.append(
        CaseResult("SSSS", "s", "unicode", "U.x", "should", "whole", Verdict.PASS, title="S")
    )
    return found


def run(started: str, version: str, broken: bool, profile: str | None = None) -> Run:
    options: dict[str, object] = {"delimiters": "think"}
    if profile:
        options = {"delimiters": "think_only", "profile": profile}
    reference = ImplementationInfo("reference", "reference", "0.1.0", "python", {}, "reference")
    lib = ImplementationInfo("lib", "lib", version, "rust", options, "cmd:./lib")
    derived = "~one+think_only" if profile else ""
    return Run(
        "0.1.0",
        "1.1",
        started,
        [
            ImplementationRun(reference, results(False)),
            ImplementationRun(lib, results(broken, derived)),
        ],
        duration=1.0,
    )


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("store") / "results.sqlite"
    with Store(path) as opened:
        opened.add(run("2026-01-01T00:00:00+00:00", "1.0", False), "one")
        opened.add(run("2026-02-01T00:00:00+00:00", "1.1", False), "two")
        opened.add(run("2026-03-01T00:00:00+00:00", "1.2", True), "three")
        opened.add(run("2026-03-01T00:00:00+00:00", "1.2", False, "deepseek_r1"), "four")
    return path


@pytest.fixture(scope="module")
def site(store: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site") / "site"
    ran = cli("site", "--store", store, "--out", out, "--base-url", "https://x.github.io/r/")
    assert ran.returncode == 0, ran.stderr
    assert "regressions:" in ran.stdout
    return out


class Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name in ("href", "src") and value:
                self.links.append(value)
            if name == "id" and value:
                self.ids.add(value)


def test_every_page_is_small_and_every_internal_link_resolves(site: Path) -> None:
    pages = list(site.rglob("*.html"))
    assert len(pages) > 10
    for page in pages:
        text = page.read_text("utf-8")
        assert len(text.encode()) < MAX_PAGE, page
        parser = Links()
        parser.feed(text)
        for link in parser.links:
            parts = urlsplit(link)
            if parts.scheme or link.startswith("//"):
                # Nothing is fetched from elsewhere: only outbound links to read.
                assert not link.endswith((".css", ".js")), (page, link)
                continue
            if not parts.path:
                assert parts.fragment in parser.ids, (page, link)
                continue
            target = (page.parent / parts.path).resolve()
            assert target.is_file(), f"{page.relative_to(site)} links to missing {link}"


def test_pages_load_nothing_from_elsewhere(site: Path) -> None:
    for page in site.rglob("*.html"):
        text = page.read_text("utf-8")
        assert not re.search(r'<(script|link)[^>]+(src|href)="(https?:)?//', text), page


def test_the_index_lists_implementations_with_filters(site: Path) -> None:
    index = (site / "index.html").read_text("utf-8")
    for name in ("library", "language", "profile", "category", "level", "disagree"):
        assert f'name="{name}"' in index
    assert 'data-library="lib"' in index and 'data-profile="deepseek_r1"' in index
    assert 'data-category="blocks"' in index and 'data-level="should"' in index
    assert 'src="site.js"' in index and 'href="site.css"' in index


def test_history_spans_dates_and_versions_with_the_change_visible(site: Path) -> None:
    page = (site / "impl" / "lib.html").read_text("utf-8")
    assert page.count("<svg") >= 3  # the category bars and two history charts
    assert "Pass share over library versions" in page
    for version in ("1.0", "1.1", "1.2"):
        assert f"<td>{version}</td>" in page
    # 1.2 broke BBBB's stream check: the history links the change.
    assert "1 regressed, 0 fixed" in page
    assert 'href="https://example.org/1">lib.leak</a>' in page
    diff = (site / "diff" / "lib-2.html").read_text("utf-8")
    assert "Regressed (1)" in diff and "BBBB" in diff
    # Release after release too: the versions chart links 1.2's changes since 1.1.
    assert 'href="../diff/lib-release-2.html"' in page
    release = (site / "diff" / "lib-release-2.html").read_text("utf-8")
    assert "Regressed (1)" in release and "BBBB" in release
    changes = (site / "diff" / "index.html").read_text("utf-8")
    assert "Release after release" in changes
    assert "conformance diff --store STORE OLD NEW" in changes


def test_badges_are_shields_endpoints_and_svg_images(site: Path) -> None:
    endpoint = json.loads((site / "badges" / "lib.json").read_text())
    assert endpoint == {
        "schemaVersion": 1,
        "label": "lib conformance",
        "message": "MUST 60.0%",
        "color": "orange",
    }
    svg = (site / "badges" / "lib--deepseek_r1.svg").read_text()
    assert svg.startswith("<svg") and "MUST 100.0%" in svg and "href" not in svg
    page = (site / "impl" / "lib.html").read_text("utf-8")
    assert "https://img.shields.io/endpoint?url=https%3A//x.github.io/r/badges/lib.json" in page


def test_case_pages_show_input_outputs_and_the_command(site: Path) -> None:
    page = (site / "case" / "BBBB.html").read_text("utf-8")
    assert "conformance run --impl cmd:./lib --id BBBB --check stream" in page
    assert "&lt;/think&gt;b" in page  # the output, escaped
    # A case of the bundled corpus shows its written input.
    assert "Expected channels" in (site / "case" / "DNTX.html").read_text("utf-8")


def test_the_json_index(site: Path) -> None:
    index = json.loads((site / "data" / "index.json").read_text())
    keys = [i["key"] for i in index["implementations"]]
    assert keys == ["reference", "lib", "lib--deepseek_r1"]
    lib = index["implementations"][1]
    assert [h["version"] for h in lib["history"]] == ["1.0", "1.1", "1.2"]
    assert lib["levels"]["must"] == [3, 5]
    assert lib["badge"] == "https://x.github.io/r/badges/lib.svg"
    assert len(index["runs"]) == 4


def test_fail_on_regression(store: Path, tmp_path: Path) -> None:
    ran = cli("site", "--store", store, "--out", tmp_path / "s", "--fail-on-regression")
    assert ran.returncode == 1
    assert "`lib`: 1 results regressed" in (tmp_path / "s" / "regressions.md").read_text()


def test_a_missing_store_is_a_usage_error(tmp_path: Path) -> None:
    ran = cli("site", "--store", tmp_path / "none.sqlite", "--out", tmp_path / "s")
    assert ran.returncode == 2 and "no such file" in ran.stderr


def test_versions_chart_in_release_order() -> None:
    from conformance.site.pages import version_key

    found = sorted(["2.68.0", "2.9.1", "unknown", "2.40.0", "10.0"], key=version_key)
    assert found == ["2.9.1", "2.40.0", "2.68.0", "10.0", "unknown"]


@pytest.mark.slow
def test_a_case_page_over_budget_is_made_again_shorter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from conformance.site import build

    long = dict(LEAK, actual={"assistant": "x" * 5000, "thinking": ""})
    info = ImplementationInfo("lib", "lib", "1", "rust", {}, "cmd:./lib")
    result = CaseResult("LONG", "l", "blocks", "B.x", "must", "stream", Verdict.FAIL, **long)  # type: ignore[arg-type]
    store = tmp_path / "s.sqlite"
    with Store(store) as opened:
        opened.add(Run("0.1.0", "1.1", "2026-01-01", [ImplementationRun(info, [result])]), "x")
        runs = opened.runs()
    built = build.build(runs, build.SiteSettings(tmp_path / "a"))
    monkeypatch.setattr(build, "PAGE_BUDGET", 1)
    shorter = build.build(runs, build.SiteSettings(tmp_path / "b"))
    page = "case/LONG.html"
    assert shorter.pages[page] < built.pages[page] - 250
    assert "(4920 more characters)" in (tmp_path / "b" / page).read_text()


def test_a_run_that_could_not_start_does_not_hide_the_last_that_did(tmp_path: Path) -> None:
    from conformance.site import build

    failed = run("2026-04-01T00:00:00+00:00", "unknown", False)
    failed.implementations[1].results = []
    failed.implementations[1].failure = "raised TypeError: an older version"
    store = tmp_path / "s.sqlite"
    with Store(store) as opened:
        opened.add(run("2026-03-01T00:00:00+00:00", "1.2", False), "works")
        opened.add(failed, "fails")
        runs = opened.runs()
    built = build.build(runs, build.SiteSettings(tmp_path / "site"))
    page = (tmp_path / "site" / "impl" / "lib.html").read_text("utf-8")
    assert "lib 1.2 (rust)" in page and "could not run: raised TypeError" in page
    assert "later run could not start" in (tmp_path / "site" / "index.html").read_text("utf-8")
    # Not starting any more is a verdict that got worse.
    assert built.regressions == {"lib": 6}


def test_the_releases_of_one_environment_are_one_history(tmp_path: Path) -> None:
    """`conformance env` labels each release's environment `lib@<release>`: the site shows one
    implementation whose history spans the releases, with the change between them."""
    from conformance.site import build

    store = tmp_path / "s.sqlite"
    with Store(store) as opened:
        for day, version, broken in (("01", "1.0", False), ("02", "1.1", True)):
            released = run(f"2026-05-{day}T00:00:00+00:00", version, broken)
            info = released.implementations[1].info
            released.implementations[1].info = ImplementationInfo(
                f"lib@{version}", info.name, version, info.language, info.options, info.spec
            )
            opened.add(released, version)
        runs = opened.runs()
    build.build(runs, build.SiteSettings(tmp_path / "site"))
    assert sorted(p.name for p in (tmp_path / "site" / "impl").glob("lib*")) == ["lib.html"]
    page = (tmp_path / "site" / "impl" / "lib.html").read_text("utf-8")
    assert "Pass share over library versions" in page and "1 regressed, 0 fixed" in page


def test_an_implementation_page_shows_what_its_fingerprint_found(tmp_path: Path) -> None:
    from conformance.site import build

    fingerprinted = run("2026-06-01T00:00:00+00:00", "2.0", False)
    fingerprinted.implementations[1].fingerprint = {
        "delimiters": {"follows": "think_only", "agrees": False},
        "sections": {"follows": "many", "agrees": True},
    }
    store = tmp_path / "s.sqlite"
    with Store(store) as opened:
        opened.add(fingerprinted, "matrix")  # through results JSON: its schema holds it
        runs = opened.runs()
    build.build(runs, build.SiteSettings(tmp_path / "site"))
    page = (tmp_path / "site" / "impl" / "lib.html").read_text("utf-8")
    assert '<th scope="col">Fingerprinted</th>' in page
    assert "<code>think_only</code> (not what it declares)" in page
    reference = (tmp_path / "site" / "impl" / "reference.html").read_text("utf-8")
    assert "No behaviour fingerprint in this run" in reference
