"""`conformance site`: the static results site, written into one directory.

Every page is rendered from the Jinja2 templates in `templates/`, over the page skeleton,
verdict badge and stylesheet it shares with report.html (conformance/reports/templates), with
the site's own rules (site.css) and one small script (the filters of the tables, kept in the
URL's query), all copied beside the pages: no CDN, nothing fetched, so the directory works
from a file server, from GitHub Pages and opened from disk. Links are relative.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2

from conformance._version import __version__
from conformance.corpus.cases import bundled_cases_dir, load_corpus
from conformance.model.cases import CaseIdentity
from conformance.reports import _jinja as shared
from conformance.site import pages
from conformance.site.charts import badge, category_bars
from conformance.site.model import Share, Site, build_site, case_rows, divergences, unexpected
from conformance.store.db import StoredRun

ASSETS = ("site.css", "site.js")
#: Bytes a case page may take before it is made again with shorter excerpts.
PAGE_BUDGET = 250_000
#: Where the badge snippets point when no --base-url is given.
PLACEHOLDER_URL = "https://OWNER.github.io/REPOSITORY"


@dataclass(frozen=True, slots=True)
class SiteSettings:
    out: Path
    #: The URL the site is published at (badge snippets need absolute URLs).
    base_url: str = PLACEHOLDER_URL
    case_dirs: Sequence[Path] = ()


@dataclass(slots=True)
class Built:
    pages: dict[str, int] = field(default_factory=dict)
    #: Regressions of each implementation's latest run against its previous one.
    regressions: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0


def environment() -> jinja2.Environment:
    # The site's templates, then those it shares with report.html (its page skeleton, the
    # verdict badge), which live with the reports.
    own = jinja2.PackageLoader("conformance.site", "templates")
    env = shared.environment(jinja2.ChoiceLoader([own, shared.loader()]))
    env.globals.update(
        stylesheets=(shared.STYLESHEET, "site.css"),
        impl_page=pages.impl_page,
        case_page=pages.case_page,
        category_page=pages.category_page,
        diff_page=pages.diff_page,
        verdict_class=pages.verdict_class,
        describe_options=pages.describe_options,
        harness_version=__version__,
        empty=Share(),
    )
    return env


def build(runs: Sequence[StoredRun], settings: SiteSettings) -> Built:
    started = datetime.now(UTC)
    site = build_site(runs)
    out = Path(settings.out)
    out.mkdir(parents=True, exist_ok=True)
    built = Built()
    env = environment()
    generated = started.isoformat(timespec="seconds")
    base = settings.base_url.rstrip("/")

    def write(name: str, text: str) -> None:
        path = out / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")
        built.pages[name] = len(text.encode("utf-8"))

    def page(template: str, name: str, **context: Any) -> None:
        root = "../" * name.count("/")
        write(
            name,
            env.get_template(template).render(
                root=root, site=site, generated=generated, page=name, **context
            ),
        )

    rows = case_rows(site.current)
    by_category: dict[str, list[pages.CaseRow]] = {}
    for row in rows:
        by_category.setdefault(row.category, []).append(row)
    keys = [e.key for e in site.current]
    disagreements = Counter(row.category for row in rows if row.disagree(keys))
    diffs = pages.diffs(site)
    latest_diffs = {d.key: d for d in diffs}
    for key, view in latest_diffs.items():
        if view.count("regressed"):
            built.regressions[key] = view.count("regressed")

    page(
        "index.html",
        "index.html",
        by_category=by_category,
        disagreements=disagreements,
        latest_diffs=latest_diffs,
        filters=_filters(site),
    )
    for entry in site.current:
        badges = []
        for level in ("must", "should"):
            if level not in entry.levels:
                continue
            made = badge(f"{entry.label} conformance", entry.levels[level], level)
            name = f"badges/{entry.key}" + ("" if level == "must" else f"-{level}")
            write(f"{name}.svg", env.get_template("badge.svg").render(badge=made))
            endpoint = {
                "schemaVersion": 1,
                "label": made.label,
                "message": made.message,
                "color": made.colour_name,
            }
            write(f"{name}.json", json.dumps(endpoint, indent=1) + "\n")
            badges.append((level, name, f"{base}/{name}"))
        page(
            "implementation.html",
            pages.impl_page(entry),
            entry=entry,
            history=site.history[entry.key],
            charts=pages.history_charts(site, entry.key),
            bars=category_bars(entry, site.categories, site.levels),
            divergences=divergences(entry),
            unexpected=unexpected(entry)[:200],
            options=pages.options_rows(entry.info.options, entry.implementation.fingerprint),
            fingerprinted=entry.implementation.fingerprint is not None,
            badges=badges,
            diffs=[d for d in diffs if d.key == entry.key],
        )
    page(
        "cases.html",
        "cases/index.html",
        by_category=by_category,
        disagreements=disagreements,
    )
    filters = _filters(site)
    for category, category_rows in by_category.items():
        page(
            "category.html",
            pages.category_page(category),
            category=category,
            rows=category_rows,
            filters=filters,
        )
    corpus = _corpus(settings.case_dirs)
    for row in rows:
        name = pages.case_page(row.id)
        page("case.html", name, **pages.case_context(row, site, corpus))
        if built.pages[name] > PAGE_BUDGET:
            # Long captures failing on many checks: each text cut shorter.
            page("case.html", name, **pages.case_context(row, site, corpus, pages.SMALL))
    by_release = pages.release_diffs(site)
    page("diffs.html", "diff/index.html", diffs=diffs, by_release=by_release)
    for view in [*diffs, *by_release]:
        page("diff.html", view.page, view=view)
    write("data/index.json", json.dumps(_index(site, base, generated), indent=1) + "\n")
    for asset in ASSETS:
        write(asset, resources.files("conformance.site").joinpath(asset).read_text("utf-8"))
    write(shared.STYLESHEET, shared.source(env, shared.STYLESHEET))
    # GitHub Pages: serve the files as they are (no Jekyll).
    (out / ".nojekyll").write_text("")
    built.seconds = (datetime.now(UTC) - started).total_seconds()
    return built


def _corpus(case_dirs: Sequence[Path]) -> dict[str, CaseIdentity]:
    corpus = load_corpus(case_dirs or (bundled_cases_dir(),))
    return {case.id: case for case in corpus.cases}


def _filters(site: Site) -> dict[str, list[str]]:
    return {
        "library": sorted({e.label for e in site.current}),
        "language": sorted({e.info.language for e in site.current}),
        "profile": sorted({e.profile or "default" for e in site.current}),
        "category": site.categories,
        "level": site.levels,
    }


def _index(site: Site, base: str, generated: str) -> dict[str, Any]:
    """The machine-readable index: implementations, their shares and where to find them."""
    return {
        "generated": generated,
        "harness_version": __version__,
        "runs": [
            {
                "hash": s.hash,
                "started": s.started,
                "harness_version": s.harness_version,
                "spec_version": s.spec_version,
                "corpus": s.corpus,
                "implementations": [i.info.label for i in s.run.implementations],
            }
            for s in site.runs
        ],
        "implementations": [
            {
                "key": e.key,
                "label": e.label,
                "name": e.info.name,
                "version": e.info.version,
                "language": e.info.language,
                "profile": e.profile,
                "options": dict(e.info.options),
                "spec": e.info.spec,
                "started": e.started,
                "run": e.stored.hash,
                "page": f"{base}/{pages.impl_page(e)}",
                "badge": f"{base}/badges/{e.key}.svg",
                "shields_endpoint": f"{base}/badges/{e.key}.json",
                "levels": {lv: [s.passed, s.judged] for lv, s in e.levels.items()},
                "categories": {
                    f"{c}/{lv}": [s.passed, s.judged] for (c, lv), s in e.categories.items()
                },
                "history": [
                    {
                        "started": h.started,
                        "version": h.info.version,
                        "run": h.stored.hash,
                        "levels": {lv: [s.passed, s.judged] for lv, s in h.levels.items()},
                    }
                    for h in site.history[e.key]
                ],
            }
            for e in site.current
        ],
    }
