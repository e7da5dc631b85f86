"""The Jinja2 templates report.html renders through, and what of them the results site shares.

They live here, in the lower layer, so that the single-run report and the site (which loads
them behind its own through a `ChoiceLoader`) draw pages and verdicts with the same markup
and the same rules: `page.html` is the skeleton of every page, `_verdicts.html` the verdict
badge, `style.css` the stylesheet of what both share. The `_report*` templates and
`report.css` and `report.js` are report.html's own. Autoescape is on: the corpus is full of
`<think>` and worse, and every piece of case text must show literally.
"""

from __future__ import annotations

from functools import cache

import jinja2

from conformance._cache import cache_dir

from ._html_parts import channel_rows, chunk_boxes
from ._visible import ELIDED, printable

#: The stylesheet of what both share (report.html puts it in the page, the site copies it
#: beside its pages).
STYLESHEET = "style.css"


def loader() -> jinja2.BaseLoader:
    return jinja2.PackageLoader("conformance.reports", "templates")


def bytecode_cache() -> jinja2.BytecodeCache | None:
    """Compiled templates kept in the cache directory (keyed by each template's source), so
    that a process writing one report does not compile them all first (about 0.1 s)."""
    root = cache_dir()
    if root is None:
        return None
    try:
        (root / "jinja").mkdir(parents=True, exist_ok=True)
    except OSError:
        return None  # a read-only cache: compiling each time is only slower
    return jinja2.FileSystemBytecodeCache(str(root / "jinja"))


def environment(templates: jinja2.BaseLoader) -> jinja2.Environment:
    """An environment over `templates` set as the shared templates expect."""
    env = jinja2.Environment(
        loader=templates,
        bytecode_cache=bytecode_cache(),
        autoescape=jinja2.select_autoescape(["html", "svg", "xml"]),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters["printable"] = printable
    return env


@cache
def reports_environment() -> jinja2.Environment:
    """One per process: its templates compile once, however many reports it writes."""
    env = environment(loader())
    # What report.html's case text macros (imported without the page's context) call.
    env.globals.update(channel_rows=channel_rows, chunk_boxes=chunk_boxes, ELIDED=ELIDED)
    return env


def source(env: jinja2.Environment, name: str) -> str:
    """A file among the templates that is not one (a stylesheet, a script), as it is."""
    assert env.loader is not None
    text, _, _ = env.loader.get_source(env, name)
    return text
