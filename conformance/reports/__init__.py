"""Reports of a run: results.json, report.md, report.html and junit.xml.

Each format is one module with `render(run) -> str` and `write(run, directory) -> Path`. They
read a `Run` and nothing else: no runner, no CLI.
"""

from __future__ import annotations

from pathlib import Path

from conformance.model.results import Run

from . import _html, _json, _junit, _markdown
from ._json import ResultsFileError, load_results

WRITERS = (_json.write, _markdown.write, _html.write, _junit.write)


def write_reports(run: Run, directory: Path) -> list[Path]:
    """Write all four reports into `directory` (created if missing); return their paths."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    return [write(run, directory) for write in WRITERS]


__all__ = ["ResultsFileError", "load_results", "write_reports"]
