"""Property-based fuzzing of an implementation, with shrinking to ready-to-commit cases.

Each property is one Hypothesis test over its contract's inputs, run against a connection
(in process or a pipelined subprocess). A failure is shrunk by Hypothesis, and the minimal
input becomes a case file whose expectations come from the reference. Each contract owns
its properties (`fuzz_inputs`, `fuzz_check`, `fuzz_replay`), the target they run against is
in `target`; this module runs one of them, whatever its contract.
"""

from __future__ import annotations

import json
import time
from typing import Any

import hypothesis
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.database import ExampleDatabase

from conformance.contracts import property_owner
from conformance.contracts._fuzzing import Counterexample, PropertyFailure, Unsupported
from conformance.fuzz.target import Target
from conformance.model.results import FuzzResult, Verdict

#: Examples per Hypothesis run; a time budget runs slices of this size until time is up.
SLICE = 250


def run_property(
    name: str,
    target: Target,
    *,
    max_examples: int,
    seed: int,
    database: ExampleDatabase | None = None,
    key: bytes = b"",
    deadline: float | None = None,
) -> FuzzResult:
    """Run one property: first replay the failures stored in `database` under `key`, then
    `max_examples` new examples, or slices of examples until `deadline` (a
    `time.monotonic()` value). The first failure is shrunk, stored and returned.

    Generation is seeded, so a seed replays a run exactly; the database is ours, not
    Hypothesis' own (which a fixed seed switches off), holding minimal failing inputs.
    """
    owner = property_owner(name)
    check = owner.fuzz_check(name)
    start = time.monotonic()
    target.examples = 0
    target.non_strict = None

    def result(
        verdict: Verdict, used_seed: int, example: Counterexample | None = None, reason: str = ""
    ) -> FuzzResult:
        return FuzzResult(
            name,
            verdict,
            target.examples,
            time.monotonic() - start,
            used_seed,
            example.reason if example else reason,
            example.to_json() if example else None,
        )

    stored = sorted(database.fetch(key), key=len) if database else []
    for value in stored:
        target.examples += 1
        try:
            owner.fuzz_replay(target, json.loads(value))
        except PropertyFailure as failure:
            example = failure.example
            return result(Verdict.ERROR if example.error else Verdict.FAIL, seed, example)
        except Unsupported:
            # Stored from an implementation that had an operation this one lacks as a whole:
            # nothing to replay here, and kept for the implementations that have it.
            continue
        assert database is not None
        database.delete(key, value)  # fixed since: forget it

    found: list[Counterexample] = []

    def test(value: Any, data: st.DataObject) -> None:
        target.examples += 1
        try:
            check(target, value, data)
        except PropertyFailure as failure:
            found.append(failure.example)
            raise

    slice_seed = seed
    while True:
        budget = max_examples if deadline is None else SLICE
        runner = settings(
            max_examples=budget,
            database=None,
            deadline=None,
            derandomize=False,
            report_multiple_bugs=False,
            suppress_health_check=list(HealthCheck),
            print_blob=False,
            # No explain phase: its extra runs would overwrite the shrunk counterexample.
            phases=[Phase.explicit, Phase.generate, Phase.target, Phase.shrink],
        )(hypothesis.given(owner.fuzz_inputs(target.options), st.data())(test))
        try:
            hypothesis.seed(slice_seed)(runner)()
        except Unsupported as unsupported:
            return result(Verdict.SKIP, seed, reason=f"unsupported: {unsupported}")
        except PropertyFailure:
            example = found[-1]
            if database is not None:
                database.save(key, json.dumps(example.input).encode())
            return result(Verdict.ERROR if example.error else Verdict.FAIL, slice_seed, example)
        except Exception as error:  # Hypothesis itself gave up: report it, do not crash
            return result(Verdict.ERROR, slice_seed, reason=f"{type(error).__name__}: {error}")
        if deadline is None or time.monotonic() >= deadline:
            note = target.non_strict
            return result(Verdict.NON_STRICT if note else Verdict.PASS, seed, note)
        slice_seed += 1
