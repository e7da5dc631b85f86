"""The results site in a real browser: Debian's Chromium, headless, driven by Playwright's
client (no browser downloaded), the site served over HTTP on 127.0.0.1 as a file server
would serve it. Every page loads without a console error or a failed request, the filters
change the URL and the rows, links resolve, badges render, tables fit 1280 px, and axe-core
(tests/browser/package.json, from npm) finds no serious or critical violation. Screenshots
go to reports/site-browser/ as test artefacts."""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.store.db import Store

from .helpers import HEADLESS_CHROMIUM, ROOT, chromium_path, cli
from .test_site import run

pytestmark = pytest.mark.slow

AXE_DIR = ROOT / "tests" / "browser"
AXE = AXE_DIR / "node_modules" / "axe-core" / "axe.min.js"
SHOTS = ROOT / "reports" / "site-browser"
#: The pages axe-core checks: one of each template.
AXE_PAGES = [
    "index.html",
    "impl/lib.html",
    "cases/index.html",
    "cases/blocks.html",
    "case/BBBB.html",
    "diff/index.html",
    "diff/lib-2.html",
]


def _need(found: Any, message: str) -> Any:
    if found:
        return found
    if os.environ.get("CI"):
        pytest.fail(f"{message}; CI is set, so the browser tests must run")
    pytest.skip(message)


@pytest.fixture(scope="module")
def chromium() -> str:
    return chromium_path()


@pytest.fixture(scope="module")
def axe() -> Path:
    if not AXE.is_file() and shutil.which("npm"):
        subprocess.run(
            ["npm", "ci", "--prefix", str(AXE_DIR), "--silent", "--no-audit", "--no-fund"],
            check=True,
            timeout=300,
        )
    return Path(_need(AXE.is_file() and AXE, f"axe-core is not installed ({AXE_DIR}: npm ci)"))


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fast tier's runs (three versions of `lib`, a regression, a profile) and two real
    runs of the reference over two categories, under two sets of options."""
    work = tmp_path_factory.mktemp("browser")
    store = work / "results.sqlite"
    with Store(store) as opened:
        opened.add(run("2026-01-01T00:00:00+00:00", "1.0", False), "one")
        opened.add(run("2026-02-01T00:00:00+00:00", "1.1", False), "two")
        opened.add(run("2026-03-01T00:00:00+00:00", "1.2", True), "three")
        opened.add(run("2026-03-01T00:00:00+00:00", "1.2", False, "deepseek_r1"), "four")
    for options in ("{}", '{"profile": "deepseek_r1"}'):
        ran = cli(
            "run", "--category", "blocks", "--category", "orphan-close", "--no-growth",
            "--options", options, "--report-dir", work / "r", "--store", store,
        )  # fmt: skip
        assert ran.returncode == 0, ran.stderr
    out = work / "site"
    built = cli("site", "--store", store, "--out", out)
    assert built.returncode == 0, built.stderr
    return out


@pytest.fixture(scope="module")
def served(site: Path) -> Iterator[str]:
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Quiet, directory=str(site))
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def browser(chromium: str) -> Iterator[Any]:
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        flags = list(HEADLESS_CHROMIUM)
        launched = playwright.chromium.launch(executable_path=chromium, args=flags)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    opened = context.new_page()
    problems: list[str] = []
    opened.on(
        "console",
        lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None,
    )
    opened.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    opened.on("requestfailed", lambda r: problems.append(f"request failed: {r.url}"))
    opened.on(
        "response", lambda r: problems.append(f"{r.status}: {r.url}") if r.status >= 400 else None
    )
    opened.problems = problems
    try:
        yield opened
    finally:
        context.close()


def test_every_page_loads_cleanly_and_fits(site: Path, served: str, page: Any) -> None:
    names = sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html"))
    assert len(names) > 40
    for name in names:
        page.goto(served + name, wait_until="load")
        assert page.problems == [], (name, page.problems)
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 1280, f"{name} is {width} px wide"
        # Every internal link of the page names a page that exists.
        for href in page.eval_on_selector_all(
            "a[href]",
            "links => links.map(a => new URL(a.getAttribute('href'), location.href).href)"
            ".filter(h => h.startsWith(location.origin))",
        ):
            path = href.removeprefix(served).split("#")[0].split("?")[0]
            assert (site / path).is_file(), f"{name} links to missing {href}"


def test_filters_change_the_url_and_the_rows(served: str, page: Any) -> None:
    page.goto(served + "index.html")
    rows = "document.querySelectorAll('tr[data-row]:not([hidden])').length"
    impls = "document.querySelectorAll('tr[data-impl]:not([hidden])').length"
    all_rows, all_impls = page.evaluate(rows), page.evaluate(impls)
    page.select_option("select[name=level]", "should")
    assert "level=should" in page.url
    assert 0 < page.evaluate(rows) < all_rows
    page.select_option("select[name=library]", "lib")
    assert "library=lib" in page.url and "level=should" in page.url
    assert page.evaluate(impls) == 2  # lib, and lib under deepseek_r1
    hidden = "document.querySelectorAll('th[data-col][hidden]').length"
    assert page.evaluate(hidden) == all_impls - 2
    page.click("button[type=reset]")
    page.wait_for_function(f"{rows} === {all_rows}")
    page.check("input[name=disagree]")
    assert "disagree=1" in page.url
    assert page.evaluate(rows) < all_rows
    # The query is read back: a linked view opens filtered.
    page.goto(served + "index.html?library=reference&category=blocks")
    assert page.input_value("select[name=library]") == "reference"
    assert page.evaluate(rows) == page.evaluate(
        "document.querySelectorAll('tr[data-row][data-category=blocks]').length"
    )
    page.goto(served + "cases/blocks.html?disagree=1")
    shown = page.evaluate(rows)
    assert 0 < shown < page.evaluate("document.querySelectorAll('tr[data-row]').length")


def test_badges_render(served: str, page: Any) -> None:
    page.goto(served + "impl/lib.html")
    sizes = page.eval_on_selector_all(
        ".badge-panel img", "images => images.map(i => [i.complete, i.naturalWidth])"
    )
    assert sizes and all(done and width > 50 for done, width in sizes), sizes
    page.goto(served + "badges/lib.svg")
    assert "MUST" in page.text_content("svg")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "badge-lib.png"))


@pytest.mark.parametrize("name", AXE_PAGES)
def test_axe_finds_no_serious_violation(name: str, served: str, page: Any, axe: Path) -> None:
    page.goto(served + name)
    page.add_script_tag(path=str(axe))
    found = page.evaluate("async () => (await axe.run(document)).violations")
    serious = [
        f"{v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes'][:3]]}"
        for v in found
        if v["impact"] in ("serious", "critical")
    ]
    assert serious == [], serious
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / (name.replace("/", "-") + ".png")), full_page=True)
