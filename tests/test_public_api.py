"""The public API is curated: each public module's `__all__` is pinned here and changes only on
purpose (and then in the docs). The package's own names are written once, in
`conformance._EXPORTS`, and everything about them derives from it.

A public module is one a user imports by name (ARCHITECTURE.md, Public API): those of
`conformance._PUBLIC_MODULES`, and the package itself. Each object is exported by one public
module only; the package re-exports a curated subset, each name loaded from that one public
module when there is one.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import conformance

PUBLIC = {
    "conformance.interface": [
        "Chunk",
        "Delta",
        "Factory",
        "HttpCall",
        "StreamNormalizer",
        "from_function",
        "from_generator",
        "implementation",
        "metadata",
    ],
    "conformance.reference": [
        "Delta",
        "Normalizer",
        "Options",
        "OptionsError",
        "join",
        "normalize_stream",
        "normalize_whole",
    ],
    "conformance.strategies": [
        "chunkings",
        "documents",
        "egress_requests",
        "flatten",
        "rechunkings",
        "render_events",
        "segments",
        "streams",
    ],
    "conformance.reports": ["ResultsFileError", "load_results", "write_reports"],
    "conformance.cassettes": [
        "FAMILIES",
        "FORMS",
        "CapturePersister",
        "Cassette",
        "CassetteError",
        "Decoded",
        "Interaction",
        "bundled_cassettes_dir",
        "cassettes_dir_for",
        "chunks_for_case",
        "decode_cassette",
        "decode_interaction",
        "detect_family",
        "guess_family",
        "iter_cassette_files",
        "load_cassette",
        "write_cassette",
    ],
    "conformance.contracts": [
        "Contract",
        "OpContract",
        "ReferenceImplementation",
        "RegistryError",
        "all_checks",
        "contract",
        "contract_checks",
        "contract_of",
        "fuzz_properties",
        "names",
        "op_contract",
        "op_contracts",
        "property_owner",
        "register",
        "registered",
        "unregister",
    ],
    "conformance.reports.annotations": ["main", "render"],
    "conformance.server": ["serve"],
    "conformance.contracts.egress": [
        "BLOCK_SEPARATOR",
        "CHECKS",
        "DEFAULTS",
        "METHOD",
        "NAME",
        "PROPERTIES",
        "ROLES",
        "SCHEMA",
        "STORED_FIELDS",
        "STRIP_POLICIES",
        "expected_for",
        "guess_taxonomy",
        "inputs",
        "judge",
        "reference",
        "requests",
        "settings_problem",
        "skip_reason",
        "stored_reasoning",
    ],
    "conformance.contracts.normalizer": [
        "CHECKS",
        "NAME",
        "PROPERTIES",
        "SCHEMA",
        "check_case",
        "forms",
        "fuzz_check",
        "fuzz_inputs",
        "fuzz_replay",
        "judge",
        "own_cases",
        "plan",
    ],
    "conformance.contracts.render": [
        "CHECKS",
        "CLOSE",
        "EVENT_TYPES",
        "METHOD",
        "NAME",
        "OPEN",
        "PROPERTIES",
        "Renderer",
        "SCHEMA",
        "SECTION_OPTIONS",
        "events_of",
        "expected_for",
        "guess_taxonomy",
        "inputs",
        "judge",
        "original_channels",
        "reference",
        "render_events",
        "requests",
        "roundtrips",
        "skip_reason",
        "split_rendered",
    ],
    "conformance.errors": ["ConformanceError", "Failure", "ImplementationStartError", "UsageError"],
    # Its API is what it adds to pytest: options, markers (docs/pytest-plugin.md).
    "conformance.pytest_plugin": [],
}


def test_the_public_modules_are_those_pinned() -> None:
    assert sorted(conformance._PUBLIC_MODULES) == sorted(PUBLIC)


@pytest.mark.parametrize("module", conformance._PUBLIC_MODULES)
def test_each_public_module_exports_exactly_its_api(module: str) -> None:
    imported = importlib.import_module(module)
    assert sorted(imported.__all__) == sorted(PUBLIC[module])
    for name in imported.__all__:
        assert getattr(imported, name) is not None, f"{module}.{name}"


def test_the_package_exports_the_versions_and_its_mapping() -> None:
    assert sorted(conformance.__all__) == sorted(
        ["PROTOCOL_VERSION", "SPEC_VERSION", "__version__", *conformance._EXPORTS]
    )
    assert dir(conformance) == sorted(conformance.__all__)
    for name in conformance.__all__:
        assert getattr(conformance, name) is not None, name


def type_checking_imports(path: Path) -> dict[str, str]:
    """Name -> module of the imports under `if TYPE_CHECKING:` in a module's source."""
    (block,) = [
        node
        for node in ast.parse(path.read_text("utf-8")).body
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
    ]
    imports: dict[str, str] = {}
    for statement in block.body:
        assert isinstance(statement, ast.ImportFrom), ast.unparse(statement)
        for alias in statement.names:
            # `X as X`: re-exported for type checkers run with no implicit re-export.
            assert alias.asname == alias.name, ast.unparse(statement)
            assert alias.name not in imports, f"{alias.name} imported twice"
            imports[alias.name] = str(statement.module)
    return imports


def test_the_type_checking_imports_are_the_mapping() -> None:
    assert conformance.__file__ is not None
    assert type_checking_imports(Path(conformance.__file__)) == conformance._EXPORTS


def public_objects(module: str) -> dict[str, object]:
    """`module.NAME` -> object, for each class or function of the package it exports."""
    imported = importlib.import_module(module)
    exported = {name: getattr(imported, name) for name in imported.__all__}
    return {
        f"{module}.{name}": value
        for name, value in exported.items()
        if (inspect.isclass(value) or inspect.isfunction(value))
        and value.__module__.split(".")[0] == "conformance"
    }


def test_no_object_is_exported_by_two_public_modules() -> None:
    """Trio's rule: each internal name is re-exported by exactly one public module, so one
    object has one public import path (the package's curated names aside)."""
    paths: dict[int, list[str]] = {}
    for module in conformance._PUBLIC_MODULES:
        for path, value in public_objects(module).items():
            paths.setdefault(id(value), []).append(path)
    assert [found for found in paths.values() if len(found) > 1] == []


def test_each_package_name_loads_from_its_one_public_module() -> None:
    """The package's names come from one place each: the public module that exports the
    object when there is one, else the module defining it."""
    homes: dict[int, str] = {}
    for module in conformance._PUBLIC_MODULES:
        for path, value in public_objects(module).items():
            homes[id(value)] = path.rpartition(".")[0]
    for name, module in conformance._EXPORTS.items():
        value = getattr(conformance, name)
        assert module == homes.get(id(value), value.__module__), name


def test_the_package_resolves_names_from_their_layers() -> None:
    from conformance.model.results import Run

    assert conformance.Run is Run
    assert conformance.load_results.__module__ == "conformance.reports._json"
    with pytest.raises(AttributeError):
        conformance.nothing_here  # noqa: B018


def test_a_protocol_program_starts_without_the_harness() -> None:
    """`python -m conformance.server` is what a `cmd:` run restarts: run as that program, it
    must not import jsonschema, Hypothesis, the corpus loader, the runner or the command line
    (`-X importtime` names every module the process imports)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "conformance.server"],
        input="",
        capture_output=True,
        text=True,
        check=True,
    )
    imported = {line.rpartition("|")[2].strip() for line in done.stderr.splitlines()}
    assert "conformance.reference" in imported
    heavy = ("jsonschema", "hypothesis", "click", "conformance.engine", "conformance.corpus")
    assert sorted(name for name in imported if name.startswith((*heavy, "conformance.cli"))) == []


#: Modules that are programs run under an environment (importing one starts its work).
_PROGRAMS = ("conformance.fuzz.hypothesis_tests", "conformance.fuzz.atheris_entry")


def _internal_modules() -> list[str]:
    public = {"conformance", *conformance._PUBLIC_MODULES}
    found = []
    for info in pkgutil.walk_packages(conformance.__path__, "conformance."):
        if info.name in public or info.name.endswith("__main__"):
            continue
        if info.name.startswith("conformance.adapters."):
            continue  # their libraries are optional: importing one may fail here
        if info.name in _PROGRAMS:
            continue
        found.append(info.name)
    return found


def test_no_internal_module_is_a_facade() -> None:
    """An internal module's `__all__` lists what it defines: no class or function reaches
    the rest of the package through a second, internal import path."""
    passed_on = []
    for name in _internal_modules():
        module = importlib.import_module(name)
        for attribute in getattr(module, "__all__", ()):
            value = getattr(module, attribute)
            if (inspect.isclass(value) or inspect.isfunction(value)) and value.__module__ != name:
                passed_on.append(f"{name}.{attribute} (from {value.__module__})")
    assert passed_on == []
