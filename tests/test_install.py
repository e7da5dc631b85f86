"""The README's first command is `pip install .`: after a plain (non-editable) install, from a
directory that is not the checkout, every documented command works with what it installed,
and the install built the C scan wherever a C compiler is present (hatch_build.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _run(
    argv: list[str | Path], cwd: Path, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    # Nothing from this checkout or this test's environment may leak into the fresh one.
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run(
        [str(a) for a in argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )


@pytest.mark.slow
def test_a_plain_install_runs_the_documented_commands(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    done = _run([sys.executable, "-m", "venv", venv], tmp_path)
    assert done.returncode == 0, done.stderr
    python, conformance = venv / "bin" / "python", venv / "bin" / "conformance"
    done = _run([python, "-m", "pip", "install", "-q", ROOT], tmp_path, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    done = _run(
        [python, "-c", "import conformance.strategies, conformance; print(conformance.__file__)"],
        elsewhere,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert str(venv) in done.stdout  # the installed package, not the checkout

    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(compiler):
        done = _run([conformance, "--version"], elsewhere)
        assert "delimiter scan: C" in done.stdout, done.stdout + done.stderr

    reports = elsewhere / "reports"
    fuzz = [
        conformance,
        "fuzz",
        "--max-examples",
        "30",
        "--database",
        "none",
        "--report-dir",
        reports,
    ]
    done = _run(fuzz, elsewhere)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]

    done = _run([conformance, "run", "--report-dir", reports / "run"], elsewhere)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert list((reports / "run").rglob("junit.xml"))

    done = _run([conformance, "check"], elsewhere)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


@pytest.mark.slow
def test_without_a_c_compiler_the_wheel_builds_without_the_c_scan_and_says_so(
    tmp_path: Path,
) -> None:
    env = {**os.environ, "CC": "false"}  # a compiler that fails every compilation
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", "-w", tmp_path, ROOT],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "the C scan (conformance/model/_scan.c) was not built" in done.stdout + done.stderr
    (wheel,) = tmp_path.glob("*.whl")
    assert wheel.name.endswith("-py3-none-any.whl")
    with zipfile.ZipFile(wheel) as archive:
        assert not [name for name in archive.namelist() if "_scan." in name and "pyi" not in name]
