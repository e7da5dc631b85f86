"""Builds the llama.cpp adapter's program (conformance/adapters/llamacpp/) once per version.

    python -m conformance.adapters.llamacpp_build            # download, configure, build
    python -m conformance.adapters.llamacpp_build --jobs 2   # parallel compile jobs

llama.cpp has no package of its parser; the llama-cpp-python source distribution on PyPI
vendors the whole llama.cpp tree (vendor/llama.cpp), so `pip download` fetches a pinned
llama.cpp with the ordinary client. The program links llama.cpp's `llama-common` library
(common/chat.cpp and its dependencies: llama, ggml) as a CPU-only static build, with no
tests, tools, examples, server, curl or OpenSSL. The result is cached outside the checkout,
keyed by version: `<cache>/llamacpp/<version>/bin/conformance_llamacpp` and the chat templates
of that llama.cpp in `<cache>/llamacpp/<version>/templates/`, where `<cache>` is
`$XDG_CACHE_HOME/reasoning-conformance` (conformance/_cache.py), by default
`~/.cache/reasoning-conformance`. Each step prints its time.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from conformance._cache import home

#: The llama-cpp-python release whose vendored llama.cpp is built.
VERSION = "0.3.36"
#: The program's sources, in this package.
SOURCE_DIR = Path(__file__).parent / "llamacpp"
PROGRAM = "conformance_llamacpp"


def cache_root() -> Path:
    # An installed program rather than a cache entry: CONFORMANCE_CACHE_DIR (which tests and
    # users point elsewhere, or turn off) does not move it.
    return home() / "llamacpp"


def version_dir(version: str = VERSION) -> Path:
    return cache_root() / version


def binary_path(version: str = VERSION) -> Path:
    return version_dir(version) / "bin" / PROGRAM


def templates_dir(version: str = VERSION) -> Path:
    return version_dir(version) / "templates"


def build_command() -> str:
    return "python -m conformance.adapters.llamacpp_build"


def _timed(step: str, command: Sequence[str], cwd: Path | None = None) -> float:
    print(f"[llamacpp] {step}: {' '.join(command)}", flush=True)
    started = time.monotonic()
    subprocess.run(list(command), cwd=cwd, check=True)
    elapsed = time.monotonic() - started
    print(f"[llamacpp] {step} took {elapsed:.0f} s", flush=True)
    return elapsed


def _safe_members(archive: tarfile.TarFile, into: Path) -> list[tarfile.TarInfo]:
    members = archive.getmembers()
    root = into.resolve()
    for member in members:
        if not (into / member.name).resolve().is_relative_to(root):
            raise RuntimeError(f"the sdist has a path outside it: {member.name}")
    return members


def build(version: str = VERSION, jobs: int = 2) -> Path:
    """Download, configure and build; returns the program's path. Steps already done for this
    version (a downloaded sdist, a configured build directory) are reused."""
    work = version_dir(version)
    work.mkdir(parents=True, exist_ok=True)
    timings: dict[str, float] = {}
    sdist = work / f"llama_cpp_python-{version}.tar.gz"
    if not sdist.exists():
        with tempfile.TemporaryDirectory(dir=work) as download:
            pip = [sys.executable, "-m", "pip", "download", "--no-binary", ":all:", "--no-deps"]
            requirement = f"llama-cpp-python=={version}"
            timings["download"] = _timed("download", [*pip, "-d", download, requirement])
            (found,) = Path(download).glob("*.tar.gz")
            found.rename(sdist)
    tree = work / f"llama_cpp_python-{version}" / "vendor" / "llama.cpp"
    if not tree.is_dir():
        started = time.monotonic()
        with tarfile.open(sdist) as archive:
            archive.extractall(work, members=_safe_members(archive, work))
        timings["extract"] = time.monotonic() - started
    build_dir = work / "build"
    configure = ["cmake", "-S", str(SOURCE_DIR), "-B", str(build_dir), "-DCMAKE_BUILD_TYPE=Release"]
    if shutil.which("ninja"):
        configure += ["-G", "Ninja"]
    configure.append(f"-DLLAMA_CPP_DIR={tree.resolve()}")
    timings["configure"] = _timed("configure", configure)
    compile_ = ["cmake", "--build", str(build_dir), "--target", PROGRAM, "-j", str(jobs)]
    timings["build"] = _timed("build", compile_)
    binary = binary_path(version)
    binary.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(build_dir / PROGRAM, binary)
    shutil.copytree(tree / "models" / "templates", templates_dir(version), dirs_exist_ok=True)
    summary = ", ".join(f"{step} {seconds:.0f} s" for step, seconds in timings.items())
    print(f"[llamacpp] built {binary} ({summary})", flush=True)
    return binary


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", default=VERSION, help="llama-cpp-python release")
    parser.add_argument("--jobs", type=int, default=2, help="parallel compile jobs")
    options = parser.parse_args(argv)
    build(options.version, options.jobs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
