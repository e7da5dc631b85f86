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
`~/.cache/reasoning-conformance`. Each step prints its time. A program already built from
these sources (conformance/adapters/llamacpp_program.py keeps their digest) is not built again
unless `--force` is given.
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

from .llamacpp_program import (
    PROGRAM,
    SOURCE_DIR,
    VERSION,
    binary_path,
    is_current,
    sources_digest,
    stamp_path,
    templates_dir,
    version_dir,
)


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


def _configured_elsewhere(build_dir: Path) -> str | None:
    """The source directory a build directory was configured from, when it is not this
    package's: CMake refuses to configure it from another one (another checkout, a moved
    virtual environment)."""
    cache = build_dir / "CMakeCache.txt"
    if not cache.is_file():
        return None
    for line in cache.read_text(encoding="utf-8", errors="replace").splitlines():
        if line.startswith("CMAKE_HOME_DIRECTORY:INTERNAL="):
            configured = line.partition("=")[2]
            return None if Path(configured) == SOURCE_DIR.resolve() else configured
    return None


def build(version: str = VERSION, jobs: int = 2, force: bool = False) -> Path:
    """Download, configure and build; returns the program's path. Steps already done for this
    version (a downloaded sdist, a configured build directory, compiled objects) are reused,
    and a program built from these sources is kept as it is."""
    if not force and is_current(version):
        print(f"[llamacpp] {binary_path(version)} is built from these sources", flush=True)
        return binary_path(version)
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
    elsewhere = _configured_elsewhere(build_dir)
    if elsewhere is not None:
        # Only the cache names the source directory; the objects of llama.cpp's tree (the
        # same path in this cache) are reused by the new configuration.
        print(f"[llamacpp] the build directory was configured from {elsewhere}; reconfiguring")
        (build_dir / "CMakeCache.txt").unlink()
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
    stamp_path(version).write_text(sources_digest() + "\n", encoding="utf-8")
    summary = ", ".join(f"{step} {seconds:.0f} s" for step, seconds in timings.items())
    print(f"[llamacpp] built {binary} ({summary})", flush=True)
    return binary


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", default=VERSION, help="llama-cpp-python release")
    parser.add_argument("--jobs", type=int, default=2, help="parallel compile jobs")
    parser.add_argument(
        "--force", action="store_true", help="build even when built from these sources"
    )
    options = parser.parse_args(argv)
    build(options.version, options.jobs, options.force)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
