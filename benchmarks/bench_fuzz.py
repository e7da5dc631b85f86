"""How fast the fuzzer runs and finds bugs. Prints figures; asserts nothing.

    python benchmarks/bench_fuzz.py

- examples per second for each property against the reference, in process and through
  `cmd:` (the reference as a pipelined subprocess);
- the default budget (every property, 500 examples each) against the reference;
- for each normalizer in tests/fakes/fuzz_targets.py (bugs no corpus case triggers): the time to
  find and shrink the first failure, and the size of the shrunk input.
"""

from __future__ import annotations

import shlex
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from conformance.contracts import fuzz_properties  # noqa: E402
from conformance.fuzz.properties import Target, run_property  # noqa: E402
from conformance.model.options import Options  # noqa: E402
from conformance.transport.impls import connect  # noqa: E402
from conformance.transport.spec import parse_impl  # noqa: E402
from tests.fakes.fuzz_targets import ALL as TARGETS  # noqa: E402

CMD_REFERENCE = f"cmd:{shlex.quote(sys.executable)} -m conformance.server"


def target(spec: str) -> Target:
    connection = connect(parse_impl(spec))
    return Target(connection, Options.from_mapping(connection.info.options))


def main() -> None:
    print("examples per second (500 examples, seed 1):")
    print(f"  {'property':<14} {'in process':>12} {'cmd:':>12}")
    totals = {}
    for spec in ("reference", CMD_REFERENCE):
        fuzz = target(spec)
        start = time.perf_counter()
        for name in fuzz_properties():
            result = run_property(name, fuzz, max_examples=500, seed=1)
            totals.setdefault(name, []).append(result.examples / result.seconds)
        totals.setdefault("(all)", []).append(time.perf_counter() - start)
        fuzz.connection.close()
    for name in fuzz_properties():
        in_process, through_cmd = totals[name]
        print(f"  {name:<14} {in_process:12.0f} {through_cmd:12.0f}")
    in_process, through_cmd = totals["(all)"]
    print(
        f"  default budget, all {len(fuzz_properties())} properties: "
        f"{in_process:.1f} s in process, {through_cmd:.1f} s through cmd:"
    )

    print("\nfinding and shrinking bugs the corpus misses (all properties, seed 7):")
    for name in TARGETS:
        fuzz = target(f"python:tests.fakes.fuzz_targets:{name}")
        start = time.perf_counter()
        for prop in fuzz_properties():
            result = run_property(prop, fuzz, max_examples=500, seed=7)
            if result.counterexample is not None:
                chunks = result.counterexample["chunks"]
                size = sum(
                    len(c.get("content") or "") + len(c.get("reasoning") or "") for c in chunks
                )
                print(
                    f"  {name:<22} found by {prop:<13} in {time.perf_counter() - start:5.2f} s"
                    f" ({result.examples} examples incl. shrinking): "
                    f"{len(chunks)} chunks, {size} characters"
                )
                break
        else:
            print(f"  {name:<22} not found within the default budget")


if __name__ == "__main__":
    main()
