"""The package's shape, as ARCHITECTURE.md draws it: layers, no cycles, small modules, each
package naming its layer, one convention for private modules."""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import grimp
import pytest

import conformance

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "conformance"
MAX_LINES = 400


def python_modules() -> list[Path]:
    return [p for p in PACKAGE.rglob("*.py") if "node_modules" not in p.parts]


def packages() -> list[str]:
    return sorted(init.parent.name for init in PACKAGE.glob("*/__init__.py"))


def contract_layers() -> list[list[str]]:
    """pyproject.toml's layers contract, layer 0 (the bottom) first: each layer's modules,
    named relative to the package."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    (layers,) = [
        contract["layers"]
        for contract in config["tool"]["importlinter"]["contracts"]
        if contract["type"] == "layers"
    ]
    return [
        [name.strip().removeprefix("conformance.") for name in layer.split("|")]
        for layer in reversed(layers)
    ]


def layer_table() -> dict[int, tuple[str, list[str]]]:
    """ARCHITECTURE.md's table of layers: number -> (name, packages)."""
    rows = re.findall(
        r"^\| (\d+) \| ([^|]+) \| ([^|]+) \|",
        (ROOT / "ARCHITECTURE.md").read_text("utf-8"),
        re.MULTILINE,
    )
    return {int(n): (name.strip(), re.findall(r"`([^`]+)`", cell)) for n, name, cell in rows}


def test_the_layer_table_is_the_layers_contract() -> None:
    table = {n: sorted(names) for n, (_, names) in layer_table().items()}
    assert table == {n: sorted(layer) for n, layer in enumerate(contract_layers())}


@pytest.mark.parametrize("package", packages())
def test_each_package_says_its_layer(package: str) -> None:
    """The docstring of `__init__.py` opens with `Layer N (name): `, N from the layers
    contract and the name from ARCHITECTURE.md's table."""
    number = {name: n for n, layer in enumerate(contract_layers()) for name in layer}
    assert package in number, f"{package} is in no layer of pyproject.toml's layers contract"
    init = PACKAGE / package / "__init__.py"
    docstring = ast.get_docstring(ast.parse(init.read_text("utf-8"))) or ""
    n = number[package]
    expected = f"Layer {n} ({layer_table()[n][0]}): "
    assert docstring.startswith(expected), f"{init.relative_to(ROOT)}: open with {expected!r}"


def test_the_readme_names_every_package() -> None:
    """README's layout names each package with its layer, as ARCHITECTURE.md's table does."""
    readme = (ROOT / "README.md").read_text("utf-8")
    layout = readme[readme.index("## Layout") :]
    rows = re.findall(r"^\| (\d+) \| ([^|]+) \|", layout, re.MULTILINE)
    named = {
        name: int(n) for n, cell in rows for name in re.findall(r"`([\w.]+?)(?:/|\.py)`", cell)
    }
    number = {name: n for n, layer in enumerate(contract_layers()) for name in layer}
    assert named == number


#: Modules that break the convention below, pending their move; listed so that the test fails
#: when one is renamed (then drop it from here) as when a new one appears.
UNCONVENTIONAL: list[str] = []


def test_private_modules_follow_one_convention() -> None:
    """In a public package (and at the top level) a module is private, `_`-named, unless it is
    itself a public module; in an internal package no module is `_`-named (ARCHITECTURE.md)."""
    public = {"conformance", *conformance._PUBLIC_MODULES}
    wrong = []
    for path in python_modules():
        *package, stem = path.relative_to(ROOT).with_suffix("").parts
        if stem in ("__init__", "__main__"):
            continue
        if ".".join(package) in public:
            conventional = stem.startswith("_") or ".".join((*package, stem)) in public
        else:
            conventional = not stem.startswith("_")
        if not conventional:
            wrong.append(path.relative_to(ROOT).as_posix())
    assert sorted(wrong) == UNCONVENTIONAL


@pytest.mark.slow
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
