"""How long `conformance matrix` takes, cold (nothing cached) and warm (nothing changed), one
implementation at a time and in parallel workers, and where one implementation's time goes.
Prints figures; asserts nothing.

    python benchmarks/bench_matrix.py [--adapter LABEL ...] [--jobs 1 --jobs 2] [--bench none]

For each `--jobs` value: the `conformance matrix` command a user types, with an empty cache
directory (cold), then again with the same one (warm): wall-clock and CPU time (user + system,
children included) of each. Then, from the cold run's cache entries, each implementation's
seconds per part (the corpus, the fingerprint, the growth check, the benchmark), as its worker
measured them, and its start.

The machine may be shared: the load average before and after each command is printed; CPU
time is the figure that load disturbs least.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from conformance.tools.matrix_store import read

ROOT = Path(__file__).resolve().parent.parent
LIGHT = ("pydantic-ai", "litellm", "vercel-ai")


def command(adapters: list[str], jobs: int, bench: str, cache: Path, reports: Path) -> list[str]:
    words = [sys.executable, "-m", "conformance", "matrix", "--jobs", str(jobs), "--bench", bench]
    words += ["--cache-dir", str(cache), "--report-dir", str(reports)]
    for adapter in adapters:
        words += ["--adapter", adapter]
    return words


def timed(words: list[str]) -> tuple[float, float, str]:
    """Wall-clock seconds, CPU seconds of the command and its children, the load before."""
    load = "{:.2f} {:.2f} {:.2f}".format(*os.getloadavg())
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    done = subprocess.run(words, cwd=ROOT, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode not in (0, 1):
        print(done.stderr[-2000:], file=sys.stderr)
        raise SystemExit(f"exit status {done.returncode}: {' '.join(words)}")
    return wall, cpu, load


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--adapter", action="append", default=None)
    parser.add_argument("--jobs", action="append", type=int, default=None)
    parser.add_argument("--bench", default="none", choices=["none", "quick", "small", "full"])
    options = parser.parse_args()
    adapters = options.adapter or list(LIGHT)
    print(f"adapters: {', '.join(adapters)} (and the reference); --bench {options.bench}")
    print(f"{'jobs':>4}  {'run':5}  {'wall s':>7}  {'cpu s':>7}  load before")
    parts: dict[str, dict[str, float]] = {}
    for jobs in options.jobs or [1, 2]:
        with tempfile.TemporaryDirectory() as scratch:
            cache, reports = Path(scratch) / "cache", Path(scratch) / "reports"
            words = command(adapters, jobs, options.bench, cache, reports)
            for name in ("cold", "warm"):
                wall, cpu, load = timed(words)
                print(f"{jobs:>4}  {name:5}  {wall:7.1f}  {cpu:7.1f}  {load}", flush=True)
            for path in sorted(cache.glob("*.json.gz")):
                stored = read(path)
                if stored is not None and stored.info is not None:
                    seconds = {"start": stored.start_seconds or 0.0, **stored.seconds}
                    parts[f"{stored.label} (jobs {jobs})"] = seconds
    print("\nwhere each implementation's time went (seconds, as its worker measured them):")
    names = ["start", "corpus", "fingerprint", "growth", "bench"]
    print(f"{'implementation':34}" + "".join(f"{n:>12}" for n in names))
    for label, seconds in parts.items():
        cells = "".join(f"{seconds[n]:12.1f}" if n in seconds else f"{'-':>12}" for n in names)
        print(f"{label:34}{cells}")
    print("load average after: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))


if __name__ == "__main__":
    main()
