"""The README's first command is `pip install .`: after a plain (non-editable) install, from a
directory that is not the checkout, every documented command works with what it installed,
and the install built the C scan wherever a C compiler is present (hatch_build.py). What is
released, the sdist and a wheel, installs with a compiler and without one, and fails without
one when the C scan is required (CONFORMANCE_REQUIRE_C_SCAN, as the release wheels are built).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent


#: What would change an install or the scan it runs, were it inherited from the test's own.
LOCAL = ("PYTHONPATH", "VIRTUAL_ENV", "CONFORMANCE_PURE_PYTHON", "CONFORMANCE_REQUIRE_C_SCAN")


def _run(
    argv: list[str | Path], cwd: Path, timeout: float = 600, **env: str
) -> subprocess.CompletedProcess[str]:
    # Nothing from this checkout or this test's environment may leak into the fresh one.
    env = {**{k: v for k, v in os.environ.items() if k not in LOCAL}, **env}
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
    # A compiler that fails every compilation.
    env = {**{k: v for k, v in os.environ.items() if k not in LOCAL}, "CC": "false"}
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
        assert not [
            name
            for name in archive.namelist()
            if name.startswith("conformance/model/_scan.") and not name.endswith(".pyi")
        ]


#: What `conformance --version` says of each scan.
C, REGEX = "delimiter scan: C", "delimiter scan: regular expressions"
#: A compiler that cannot even be started.
NO_COMPILER = "/nonexistent/cc"


@pytest.mark.slow
def test_the_sdist_and_its_wheel_install_with_and_without_a_compiler(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    # The sdist, then a wheel built from it (what cibuildwheel does on each platform).
    done = _run([sys.executable, "-m", "build", "--outdir", dist, ROOT], tmp_path, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (sdist,) = dist.glob("*.tar.gz")
    (wheel,) = dist.glob("*.whl")
    with tarfile.open(sdist) as archive:
        names = archive.getnames()
    assert any(n.endswith("conformance/model/_scan.c") for n in names)
    assert any(n.endswith("/hatch_build.py") for n in names)
    assert not [n for n in names if n.endswith((".so", ".pyd"))]  # the checkout's own build
    assert not wheel.name.endswith("-none-any.whl")  # this platform's, with the module
    with zipfile.ZipFile(wheel) as archive:
        assert [n for n in archive.namelist() if n.startswith("conformance/model/_scan.")]
        assert not [n for n in archive.namelist() if n.endswith(".c")]

    venv = tmp_path / "venv"
    assert _run([sys.executable, "-m", "venv", venv], tmp_path).returncode == 0
    python, conformance = venv / "bin" / "python", venv / "bin" / "conformance"
    pip = [python, "-m", "pip", "install", "--no-cache-dir", "--force-reinstall"]
    reports = tmp_path / "reports"
    one_case = [conformance, "run", "--id", "DNTX", "--no-growth", "--report-dir", reports]

    done = _run([*pip, "-q", wheel], tmp_path, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    assert C in _run([conformance, "--version"], tmp_path).stdout
    done = _run(one_case, tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "note: the C scan" not in done.stderr

    # Without a compiler the sdist installs on the regular expressions, and says so: in
    # pip's verbose output, and on every command's stderr.
    done = _run([*pip, "-v", "--no-deps", sdist], tmp_path, timeout=900, CC=NO_COMPILER)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "the C scan (conformance/model/_scan.c) was not built" in done.stdout + done.stderr
    assert NO_COMPILER in done.stdout + done.stderr  # the compiler really was the one missing
    assert REGEX in _run([conformance, "--version"], tmp_path).stdout
    done = _run(one_case, tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert done.stderr.startswith("note: the C scan of exact grammars is not built")
    assert REGEX in _run([conformance, "--version"], tmp_path, CONFORMANCE_PURE_PYTHON="1").stdout
    done = _run(one_case, tmp_path, CONFORMANCE_PURE_PYTHON="1")
    assert "note: the C scan" not in done.stderr  # asked for: nothing to note

    # Required, the scan's absence fails the install, saying why; the last install stays.
    done = _run(
        [*pip, "--no-deps", sdist],
        tmp_path,
        timeout=900,
        CC=NO_COMPILER,
        CONFORMANCE_REQUIRE_C_SCAN="1",
    )
    assert done.returncode != 0
    assert "could not be built and CONFORMANCE_REQUIRE_C_SCAN is set" in done.stderr, done.stderr[
        -3000:
    ]
    # With a compiler again, the requirement is met from the sdist too.
    done = _run([*pip, "-q", "--no-deps", sdist], tmp_path, CONFORMANCE_REQUIRE_C_SCAN="1")
    assert done.returncode == 0, done.stderr[-3000:]
    assert C in _run([conformance, "--version"], tmp_path).stdout


def _wheel_check_passes(command: str, pure: str) -> bool:
    """Whether cibuildwheel's test-command passes here, with this interpreter's scripts."""
    env = {
        **os.environ,
        "CONFORMANCE_PURE_PYTHON": pure,
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]),
    }
    done = subprocess.run(command, shell=True, env=env, capture_output=True, timeout=120)
    return done.returncode == 0


def test_every_release_wheel_is_built_with_the_c_scan_and_checked_for_it() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["cibuildwheel"]
    assert config["environment"]["CONFORMANCE_REQUIRE_C_SCAN"] == "1"
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "release.yml").read_text())
    (build,) = [
        step
        for step in workflow["jobs"]["wheels"]["steps"]
        if step.get("uses", "").startswith("pypa/cibuildwheel@")
    ]
    assert build["env"]["CONFORMANCE_REQUIRE_C_SCAN"] == "1"
    publish = workflow["jobs"]["publish"]
    assert publish["permissions"] == {"id-token": "write"}  # trusted publishing, no token
    assert set(publish["needs"]) == {"sdist", "wheels"}
    # The wheels' check fails where the regular expressions run, and passes on the C scan.
    command = " && ".join(config["test-command"])
    assert not _wheel_check_passes(command, pure="1")
    if importlib.util.find_spec("conformance.model._scan") is not None:
        assert _wheel_check_passes(command, pure="")
