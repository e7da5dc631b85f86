"""What a matrix verdict depends on, as digests: the cache key of one implementation.

An implementation's results, fingerprint and measurements are reused only when everything
they depend on is unchanged, found without starting the implementation (a library's import
can take longer than serving the whole entry):

- the harness: this package's version, the spec's, and the source of every module that plans,
  judges, probes or measures (`harness_digest`: all of the package but the adapters, the
  command line and the report writers, which read results and never make them);
- the corpus: the cases as loaded (`corpus_digest`), so an edited case file, cassette or
  decoder shows;
- the implementation (`implementation_material`): its label and spec, the request timeout
  (it decides TIMEOUT verdicts), Python's version; for `python:` the source of its module and
  of every module of its own package it imports, and the installed version of each
  distribution it imports and of everything they require; for `cmd:` the program and each
  file the command line names, with the scripts, package manifests and installed-package lock
  beside a script (node_modules/.package-lock.json). What an implementation reports in
  `hello` (name, version, options) is a function of these; it is stored with the results.

The expectation files are not in the key: the stored results are the raw verdicts, and the
locks are applied to them when they are read, as to a fresh run.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib.util
import json
import platform
import re
import shlex
import shutil
import sys
from collections.abc import Iterable, Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from conformance._version import SPEC_VERSION, __version__
from conformance.model.cases import CaseIdentity

#: Bumped when what is stored changes shape.
FORMAT = 2
PACKAGE = Path(__file__).resolve().parent.parent
#: Parts of the package that never make a result: results are read by them, or they drive
#: other commands. The adapters are keyed one by one.
NOT_HARNESS = ("adapters", "cli", "reports", "capture", "replay", "pytest_plugin", "fuzz")
NOT_HARNESS_FILES = ("tools/ecosystem.py", "tools/matrix_progress.py", "__main__.py")
SOURCE_SUFFIXES = (".py", ".c", ".json", ".yaml")
SCRIPT_SUFFIXES = (".mjs", ".js", ".cjs", ".ts", ".py")
ADAPTERS = "conformance.adapters."
NODE_MANIFESTS = ("package.json", "package-lock.json", "node_modules/.package-lock.json")


def digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def file_digest(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return "unreadable"


@functools.cache
def harness_digest() -> str:
    files = {}
    for path in sorted(PACKAGE.rglob("*")):
        relative = path.relative_to(PACKAGE).as_posix()
        if (
            path.suffix not in SOURCE_SUFFIXES
            or "__pycache__" in path.parts
            or relative.split("/")[0] in NOT_HARNESS
            or relative in NOT_HARNESS_FILES
        ):
            continue
        files[relative] = file_digest(path)
    return digest({"format": FORMAT, "harness": __version__, "spec": SPEC_VERSION, "files": files})


@functools.cache
def reports_digest() -> str:
    """The report writers: every source and template of `conformance/reports`."""
    reports = PACKAGE / "reports"
    return digest(
        {
            path.relative_to(reports).as_posix(): file_digest(path)
            for path in sorted(reports.rglob("*"))
            if path.is_file() and "__pycache__" not in path.parts
        }
    )


def corpus_digest(cases: Sequence[CaseIdentity]) -> str:
    return digest([case.to_json() for case in cases])


def implementation_material(label: str, spec: str, timeout: float) -> dict[str, Any]:
    """What an implementation's behaviour depends on, as found without starting it."""
    material: dict[str, Any] = {
        "label": label,
        "spec": spec,
        "timeout": timeout,
        "python": sys.version,
        "machine": platform.machine(),
    }
    kind, _, rest = spec.partition(":")
    if kind in ("python", "python-isolated"):
        material.update(_python_module(rest.partition(":")[0]))
    elif kind == "cmd":
        material.update(_command(rest))
    return material


# --- python: the module, its package's modules it imports, the distributions ---------------


def _python_module(module: str) -> dict[str, Any]:
    sources: dict[str, str] = {}
    imported: set[str] = set()
    _scan(module, sources, imported)
    return {"sources": sources, "distributions": distributions(imported)}


def _module_file(name: str) -> Path | None:
    """The source file of module `name`, found on disk: nothing is imported (finding a
    submodule's spec the usual way runs its package, and an adapter's package may import
    its library)."""
    top, *rest = name.split(".")
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    if not rest:
        return Path(spec.origin) if spec.origin and spec.origin.endswith(".py") else None
    for location in spec.submodule_search_locations or ():
        base = Path(location, *rest)
        for candidate in (base.with_suffix(".py"), base / "__init__.py"):
            if candidate.is_file():
                return candidate
    return None


def _scan(module: str, sources: dict[str, str], imported: set[str]) -> None:
    """Hash `module`'s source and that of the modules of its own package it imports
    (recursively); collect the top-level names of everything else it imports."""
    path = _module_file(module)
    if path is None:
        sources[module] = "not found"
        return
    sources[module] = file_digest(path)
    own = module.split(".")[0]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    try:
        tree = ast.parse(path.read_bytes())
    except (OSError, SyntaxError, ValueError):
        return
    for name in _imports(tree, package):
        top = name.split(".")[0]
        if top != own:
            imported.add(top)
        elif (
            # The harness is keyed as a whole (harness_digest); its adapters one by one.
            name not in sources
            and (own != "conformance" or name.startswith(ADAPTERS))
            and _module_file(name) is not None
        ):
            _scan(name, sources, imported)


def _imports(tree: ast.AST, package: str) -> Iterable[str]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            if not base:
                continue
            yield base
            # `from package import module` names a module as often as an attribute.
            yield from (f"{base}.{alias.name}" for alias in node.names if alias.name != "*")


@functools.cache
def _top_level_distributions() -> Mapping[str, list[str]]:
    return metadata.packages_distributions()


@functools.cache
def _distribution(name: str) -> tuple[str, tuple[str, ...]] | None:
    try:
        found = metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return None
    required = []
    for requirement in found.requires or ():
        if "extra ==" in requirement.partition(";")[2].replace(" ", "").replace("==", " == "):
            continue
        match = re.match(r"[A-Za-z0-9._-]+", requirement)
        if match:
            required.append(match.group())
    return found.version, tuple(required)


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def distributions(tops: Iterable[str]) -> dict[str, str]:
    """The installed distributions providing `tops` and everything they require, name ->
    version; a top-level name no distribution provides (and not of the standard library)
    is `absent`, so installing it changes the key."""
    owners = _top_level_distributions()
    found: dict[str, str] = {}
    todo: list[str] = []
    for top in sorted(set(tops)):
        if top in owners:
            todo += owners[top]
        elif top not in sys.stdlib_module_names and importlib.util.find_spec(top) is None:
            found[f"module {top}"] = "absent"
    while todo:
        name = todo.pop()
        if _normal(name) in found:
            continue
        info = _distribution(name)
        if info is None:
            continue
        found[_normal(name)] = info[0]
        todo += info[1]
    return dict(sorted(found.items()))


# --- cmd: the program and the files the command line names ------------------------------------


def _command(rest: str) -> dict[str, Any]:
    try:
        words = shlex.split(rest)
    except ValueError:
        return {}
    files: dict[str, str] = {}
    material: dict[str, Any] = {"files": files}
    if words:
        program = shutil.which(words[0])
        if program is not None:
            real = Path(program).resolve()
            stat = real.stat()
            material["program"] = f"{real}:{stat.st_size}:{stat.st_mtime_ns}"
    for index, word in enumerate(words):
        if index and words[index - 1] == "-m":
            material.update(_python_module(word))
            continue
        path = Path(word)
        if not path.is_file():
            continue
        files[word] = file_digest(path)
        if path.suffix in SCRIPT_SUFFIXES:
            for sibling in sorted(path.resolve().parent.iterdir()):
                if sibling.suffix in SCRIPT_SUFFIXES and sibling.is_file():
                    files[str(sibling)] = file_digest(sibling)
            for manifest in NODE_MANIFESTS:
                candidate = path.resolve().parent / manifest
                if candidate.is_file():
                    files[str(candidate)] = file_digest(candidate)
    return material
