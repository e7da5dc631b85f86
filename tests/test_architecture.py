"""The package's shape, as ARCHITECTURE.md draws it: layers, no cycles, small modules."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "conformance"
MAX_LINES = 400


def python_modules() -> list[Path]:
    return [p for p in PACKAGE.rglob("*.py") if "node_modules" not in p.parts]


def test_layers_are_kept() -> None:
    """`lint-imports` checks pyproject.toml's layers contract; a broken one names the import."""
    lint = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    assert lint, "import-linter is a test dependency"
    done = subprocess.run([lint], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:]


def test_no_import_cycles() -> None:
    graph = grimp.build_graph("conformance", include_external_packages=False)
    modules = sorted(graph.modules)
    cycles = []
    for module in modules:
        for imported in graph.find_modules_directly_imported_by(module):
            path = graph.find_shortest_chain(importer=imported, imported=module)
            if path:
                cycles.append(" -> ".join((module, *path)))
    assert not cycles, "\n".join(cycles)


@pytest.mark.parametrize("path", python_modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_is_long(path: Path) -> None:
    lines = path.read_text("utf-8").count("\n")
    assert lines <= MAX_LINES, f"{path.relative_to(ROOT)} has {lines} lines (at most {MAX_LINES})"
