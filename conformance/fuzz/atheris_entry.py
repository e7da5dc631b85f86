"""An Atheris (libFuzzer) entry point for the fuzz properties, for OSS-Fuzz and
ClusterFuzzLite:

    CONFORMANCE_IMPL="mine=python:my_pkg:Normalizer" CONFORMANCE_PROPERTY=differential \
        python -m conformance.fuzz.atheris_entry -max_total_time=60

(`pip install 'reasoning-conformance[atheris]'`). libFuzzer's bytes drive Hypothesis'
`fuzz_one_input`, so inputs are the same streams as `conformance fuzz` draws; a failure is
written as a case file into `$CONFORMANCE_FOUND_DIR` before the fuzzer stops on it.
docs/fuzzing.md has a build.sh and a workflow.
"""

from __future__ import annotations

import os
import sys

from conformance.fuzz.campaign import environment_tests

PROPERTY_VARIABLE = "CONFORMANCE_PROPERTY"


def main(argv: list[str] | None = None) -> None:
    import atheris

    name = os.environ.get(PROPERTY_VARIABLE, "differential")
    test = environment_tests([name])[f"test_{name}"]
    fuzz_one_input = test.hypothesis.fuzz_one_input  # type: ignore[attr-defined]
    atheris.Setup(sys.argv if argv is None else argv, fuzz_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
