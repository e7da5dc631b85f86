"""Layer 6 (fuzzing and reports): reports of a run, results.json, report.md, report.html and
junit.xml.

Each format is one module with `FILENAME` and `render(run) -> str`. They read a `Run` and
nothing else: no runner, no CLI. Writing them is done here, once for all formats.
"""

from __future__ import annotations

from pathlib import Path

from conformance.model.results import Run

from . import _html, _json, _junit, _markdown
from ._aside import forkable, write_aside
from ._files import write_atomically
from ._json import ResultsFileError, load_results

FORMATS = (_json, _markdown, _html, _junit)


def write_reports(run: Run, directory: Path) -> list[Path]:
    """Write all four reports into `directory` (created if missing); return their paths.
    report.html, the costliest, is written beside the others where that is safe (_aside.py)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    results = sum(len(implementation.results) for implementation in run.implementations)
    html = write_aside(
        directory / _html.FILENAME, lambda: _html.render(run), fork=forkable(results)
    )
    for module in FORMATS:
        if module is not _html:
            write_atomically(directory / module.FILENAME, module.render(run))
    html()
    return [directory / module.FILENAME for module in FORMATS]


__all__ = ["ResultsFileError", "load_results", "write_reports"]
