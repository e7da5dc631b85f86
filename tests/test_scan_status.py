"""Which scan the reference runs, and who is told: c_scan.py decides between the C scan and
the regular expressions (turned off, not built, or a stale in-place build), the command line
says so when the install has no C scan, and the build hook (hatch_build.py) builds without it
only when the compiler or the toolchain failed, never when the build itself has a bug."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from setuptools.errors import CompileError

import hatch_build
from conformance.cli import common
from conformance.model import c_scan
from tests.helpers import ROOT, cli, process_environment


@pytest.fixture
def built(monkeypatch) -> ModuleType:
    """The built C scan, whether or not this process uses it (CONFORMANCE_PURE_PYTHON)."""
    monkeypatch.delenv("CONFORMANCE_PURE_PYTHON", raising=False)
    try:
        return importlib.import_module("conformance.model._scan")
    except ImportError:
        pytest.skip("the C scan is not built here (no C compiler at install time)")


def test_the_environment_turns_the_c_scan_off(monkeypatch):
    monkeypatch.setenv("CONFORMANCE_PURE_PYTHON", "1")
    assert c_scan.load_c_scan() == (None, "off")


def test_a_module_that_does_not_import_is_missing(monkeypatch):
    monkeypatch.delenv("CONFORMANCE_PURE_PYTHON", raising=False)
    # What `import` does where the module was never built: ImportError.
    monkeypatch.setitem(sys.modules, "conformance.model._scan", None)
    assert c_scan.load_c_scan() == (None, "missing")


def _source(tmp_path: Path, module: ModuleType, age: float) -> Path:
    """A stand-in for `_scan.c`, modified `age` seconds after `module` was built."""
    source = tmp_path / "_scan.c"
    source.write_text("/* edited */\n")
    built = Path(module.__file__ or "").stat().st_mtime
    os.utime(source, (built + age, built + age))
    return source


def test_an_in_place_build_older_than_its_source_is_not_used(monkeypatch, tmp_path, built):
    monkeypatch.setattr(c_scan, "SOURCE", _source(tmp_path, built, 60))
    with pytest.warns(RuntimeWarning, match=r"older than .*_scan\.c.*pip install -e \."):
        assert c_scan.load_c_scan() == (None, "stale")


def test_an_in_place_build_newer_than_its_source_is_used(monkeypatch, tmp_path, recwarn, built):
    monkeypatch.setattr(c_scan, "SOURCE", _source(tmp_path, built, -60))
    assert c_scan.load_c_scan() == (built, "built")
    # A wheel carries no source: nothing to compare with.
    monkeypatch.setattr(c_scan, "SOURCE", tmp_path / "absent.c")
    assert c_scan.load_c_scan() == (built, "built")
    assert not recwarn.list


@pytest.mark.slow
@pytest.mark.parametrize(("status", "shown"), [("missing", True), ("off", False), ("built", False)])
def test_every_command_notes_a_missing_c_scan_on_stderr(monkeypatch, tmp_path, status, shown):
    monkeypatch.setattr(common, "C_SCAN_STATUS", status)
    ran = cli("run", "--id", "DNTX", "--no-growth", "--report-dir", tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert ran.stderr.count(common.MISSING_C_SCAN) == (1 if shown else 0)
    assert common.MISSING_C_SCAN not in ran.stdout


#: `conformance ARGS` in a process where the C scan cannot be imported, as without a compiler.
UNBUILT = (
    "import sys; sys.modules['conformance.model._scan'] = None; "
    "from conformance.cli.main import main; main(sys.argv[1:], prog_name='conformance')"
)


@pytest.mark.slow
@pytest.mark.parametrize(("pure", "shown"), [("", True), ("1", False)])
def test_a_process_without_the_c_scan_says_so_unless_asked_for(tmp_path, pure, shown):
    args = ["run", "--id", "DNTX", "--no-growth", "--report-dir", str(tmp_path)]
    done = subprocess.run(
        [sys.executable, "-c", UNBUILT, *args],
        env=process_environment({"CONFORMANCE_PURE_PYTHON": pure}),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    notes = [line for line in done.stderr.splitlines() if line.startswith("note: the C scan")]
    assert notes == ([common.MISSING_C_SCAN] if shown else [])


class _App:
    """hatchling's application, as far as the hook uses it."""

    def __init__(self) -> None:
        self.warnings: list[str] = []

    def display_warning(self, message: str) -> None:
        self.warnings.append(message)


def _hook(tmp_path: Path, monkeypatch, error: Exception) -> tuple[Any, _App]:
    """The build hook of a wheel whose compilation raises `error`."""

    def fail(root: Path, build_lib: Path | None) -> Path:
        raise error

    monkeypatch.setattr(hatch_build, "build_extension", fail)
    app = _App()
    hook = hatch_build.CustomBuildHook(str(ROOT), {}, None, None, str(tmp_path), "wheel", app)
    return hook, app


def _toolchain_failure() -> Exception:
    return CompileError("command 'cc' failed: No such file or directory")


def test_a_compiler_failure_builds_the_wheel_without_the_scan(monkeypatch, tmp_path):
    monkeypatch.delenv("CONFORMANCE_REQUIRE_C_SCAN", raising=False)
    hook, app = _hook(tmp_path, monkeypatch, _toolchain_failure())
    build_data: dict[str, Any] = {"force_include": {}}
    hook.initialize("standard", build_data)
    assert build_data == {"force_include": {}}  # pure: no module, no platform tag
    (warning,) = app.warnings
    assert "was not built" in warning
    assert "No such file or directory" in warning


def test_with_the_scan_required_a_compiler_failure_fails_the_build(monkeypatch, tmp_path):
    monkeypatch.setenv("CONFORMANCE_REQUIRE_C_SCAN", "1")
    hook, app = _hook(tmp_path, monkeypatch, _toolchain_failure())
    with pytest.raises(RuntimeError, match="could not be built and CONFORMANCE_REQUIRE_C_SCAN"):
        hook.initialize("standard", {"force_include": {}})
    assert not app.warnings


@pytest.mark.parametrize("error", [KeyError("ext_modules"), TypeError("bad argument")])
def test_any_other_error_of_the_build_propagates(monkeypatch, tmp_path, error):
    monkeypatch.delenv("CONFORMANCE_REQUIRE_C_SCAN", raising=False)
    hook, app = _hook(tmp_path, monkeypatch, error)
    with pytest.raises(type(error)):
        hook.initialize("standard", {"force_include": {}})
    assert not app.warnings
