"""report.html and the results site draw from one set of templates and one stylesheet
(conformance/reports/templates): the same page skeleton, the same verdict badge, the same
rules; report.html's markup is all in templates (no HTML built in Python)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from conformance.model.results import Verdict
from conformance.reports import _html, _jinja
from conformance.site import build

from .test_reports import make_run
from .test_site import site, store

__all__ = ["site", "store"]  # the site's module fixtures, built once for these tests too

REPORTS = Path(_html.__file__).parent
SHEETS = {
    "style.css": REPORTS / "templates" / "style.css",
    "report.css": REPORTS / "templates" / "report.css",
    "site.css": Path(build.__file__).parent / "site.css",
}


def shared_css() -> str:
    return _jinja.source(_jinja.reports_environment(), _jinja.STYLESHEET)


def test_both_carry_the_shared_stylesheet(site: Path) -> None:
    css = shared_css()
    # The verdicts' colours are defined there once.
    assert "--FAIL:#b3261e" in css and ".v-FAIL{--c:var(--FAIL)" in css
    assert css in _html.render(make_run())  # in the page: report.html is one file
    assert (site / "style.css").read_text("utf-8") == css
    assert '<link rel="stylesheet" href="style.css">' in (site / "index.html").read_text("utf-8")
    case = (site / "case" / "BBBB.html").read_text("utf-8")
    assert '<link rel="stylesheet" href="../style.css">' in case
    assert "<style>" not in case


def test_both_draw_verdicts_with_the_same_badge(site: Path) -> None:
    badge = _jinja.reports_environment().get_template("_verdicts.html").module.badge  # type: ignore[attr-defined]
    failed = str(badge(Verdict.FAIL))
    assert failed == '<span class="badge v-FAIL">FAIL</span>'
    assert failed in _html.render(make_run())
    assert failed in (site / "case" / "BBBB.html").read_text("utf-8")
    assert failed in (site / "impl" / "lib.html").read_text("utf-8")


def test_both_pages_are_built_on_the_same_skeleton(site: Path) -> None:
    head = '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
    assert _html.render(make_run()).startswith(head)
    assert (site / "index.html").read_text("utf-8").startswith(head)
    assert build.environment().get_template("page.html").filename == str(
        REPORTS / "templates" / "page.html"
    )


def _declarations(css: str) -> dict[tuple[str, str], str]:
    """(selector, property) -> value, each selector of a list on its own."""
    found = {}
    for block in re.sub(r"/\*.*?\*/", "", css, flags=re.DOTALL).split("}"):
        if "{" not in block:
            continue
        selectors, body = block.split("{", 1)
        for selector in selectors.split(","):
            for declaration in body.split(";"):
                if ":" in declaration:
                    name, value = declaration.split(":", 1)
                    found[" ".join(selector.split()), name.strip()] = " ".join(value.split())
    return found


def test_no_rule_is_written_in_two_stylesheets() -> None:
    rules = {name: _declarations(path.read_text("utf-8")) for name, path in SHEETS.items()}
    seen: dict[tuple[str, str, str], str] = {}
    for name, declarations in rules.items():
        for (selector, prop), value in declarations.items():
            other = seen.setdefault((selector, prop, value), name)
            assert other == name, f"{selector} {{{prop}: {value}}} in {other} and {name}"


def test_no_html_is_built_in_python() -> None:
    """Markup lives in the templates, where autoescape covers every piece of case text."""
    for module in sorted(REPORTS.glob("_html*.py")):
        tree = ast.parse(module.read_text("utf-8"))
        docstrings = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef)
            and ast.get_docstring(node) is not None
        }
        strings = [
            node.value
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
        ]
        markup = [text for text in strings if re.search(r"<[a-z/!]", text)]
        assert not markup, f"{module.name} builds HTML: {markup}"


def test_compiled_templates_are_kept_in_the_cache_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONFORMANCE_CACHE_DIR", str(tmp_path))
    env = _jinja.environment(_jinja.loader())
    env.get_template("page.html")
    assert list((tmp_path / "jinja").iterdir())
    monkeypatch.setenv("CONFORMANCE_CACHE_DIR", "off")
    assert _jinja.bytecode_cache() is None
