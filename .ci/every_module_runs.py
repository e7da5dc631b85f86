"""Checks that the default test tier runs code in every module of the package.

Reads the JSON report of `coverage run -m pytest -n 2` (`coverage json`). A module counts as
run when the body of one of its functions ran, not just its definitions (a module without
functions, or only stubs such as a Protocol's: when any of its statements ran). The slow
tier adds depth, and one kind of module: the adapters whose libraries take seconds to import
(tests/tiers.py lists them), which the slow tier judges over the whole corpus. Any other
module only the slow tier reaches is a module the everyday `python -m pytest -n 2` leaves
untested.

    python .ci/every_module_runs.py coverage.json
"""

from __future__ import annotations

import json
import runpy
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: The adapters the slow tier runs (tests/tiers.py, read by path: it imports nothing).
SLOW_TO_IMPORT = runpy.run_path(str(ROOT / "tests" / "tiers.py"))["SLOW_TO_IMPORT"]

#: Modules the default tier cannot run here, and why.
EXEMPT = {
    "conformance/fuzz/atheris_entry.py": "runs under libFuzzer (slow tier: test_fuzz_campaigns)",
    **{
        module.replace(".", "/") + ".py": "its library takes seconds to import (tests/tiers.py)"
        for module in SLOW_TO_IMPORT
    },
}


def not_run(report: dict) -> list[str]:
    missing = []
    for name, entry in sorted(report["files"].items()):
        if entry["summary"]["num_statements"] == 0:
            continue  # an empty __init__.py
        functions = [
            f
            for key, f in entry.get("functions", {}).items()
            if key and f["summary"]["num_statements"]  # not the module, not a `...` stub
        ]
        if functions:
            ran = any(f["summary"]["covered_lines"] for f in functions)
        else:
            ran = entry["summary"]["covered_lines"] > 0
        if not ran:
            missing.append(name)
    return missing


def main(path: str) -> int:
    report = json.loads(Path(path).read_text("utf-8"))
    missing = not_run(report)
    exempt = [name for name in missing if name in EXEMPT]
    missing = [name for name in missing if name not in EXEMPT]
    for name in exempt:
        print(f"{name}: not run by the default tier ({EXEMPT[name]})")
    for name in missing:
        print(f"{name}: no test of the default tier runs its code")
    counted = sum(1 for entry in report["files"].values() if entry["summary"]["num_statements"])
    if missing:
        print(f"{len(missing)} of {counted} modules are not run by the default tier")
        return 1
    print(f"the default tier runs code in {counted - len(exempt)} of {counted} modules")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
