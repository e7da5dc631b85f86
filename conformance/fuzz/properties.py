"""Property-based fuzzing of an implementation, with shrinking to ready-to-commit cases.

Each property is one Hypothesis test over its contract's inputs, run against a connection
(in process or a pipelined subprocess). A failure is shrunk by Hypothesis, and the minimal
input becomes a case file whose expectations come from the reference. Each contract owns
its properties (`fuzz_inputs`, `fuzz_check`, `fuzz_replay`), the target they run against is
in `target`; this module runs one of them, whatever its contract.
"""

from __future__ import annotations

import dataclasses
import json
import time
from typing import Any

import hypothesis
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.database import ExampleDatabase

from conformance.contracts import property_owner
from conformance.contracts._fuzzing import Counterexample, PropertyFailure, Unsupported
from conformance.fuzz.minimize import minimize
from conformance.fuzz.signatures import distinct, signature, size
from conformance.fuzz.target import Target
from conformance.model.results import FuzzResult, Verdict

#: Examples per Hypothesis run under a time budget (slices until time is up), and per run
#: looking for further bugs after the first were found.
SLICE = 250


def run_property(name: str, target: Target, **run: Any) -> FuzzResult:
    """The first result of `fuzz_property` (its smallest bug, if any), for callers that
    report one verdict per property; `run` are `fuzz_property`'s keyword arguments."""
    return fuzz_property(name, target, **run)[0]


def fuzz_property(
    name: str,
    target: Target,
    *,
    max_examples: int,
    seed: int,
    database: ExampleDatabase | None = None,
    key: bytes = b"",
    deadline: float | None = None,
) -> list[FuzzResult]:
    """Run one property: first replay the failures stored in `database` under `key`, then
    `max_examples` new examples, or slices of examples until `deadline` (a
    `time.monotonic()` value). Returns one result per distinct bug found (each shrunk,
    stored, and with its signature; smallest first), or the one passing verdict.

    Each bug signature raises an exception class of its own, so Hypothesis shrinks and
    reports each one (`report_multiple_bugs`). Hypothesis stops looking for more soon after
    the first; a run that found bugs is followed by another, with the next seed, in which
    the bugs already found pass, until the budget is spent.

    Generation is seeded, so a seed replays a run exactly; the database is ours, not
    Hypothesis' own (which a fixed seed switches off), holding minimal failing inputs.
    """
    owner = property_owner(name)
    check = owner.fuzz_check(name)
    options = target.options
    start = time.monotonic()
    target.examples = 0
    target.non_strict = None
    #: The smallest failure of each signature, and the seed of the run that found it.
    found: dict[str, tuple[Counterexample, int]] = {}

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

    def keep(failure: PropertyFailure, used_seed: int) -> str:
        bug = failure.signature or signature(failure.example, options, name)
        old = found.get(bug)
        if old is None or size(failure.example.to_json()) < size(old[0].to_json()):
            found[bug] = (failure.example, used_seed)
        return bug

    def bugs(*more: FuzzResult) -> list[FuzzResult]:
        ordered = sorted(found.items(), key=lambda item: size(item[1][0].to_json()))
        return [
            dataclasses.replace(
                result(Verdict.ERROR if example.error else Verdict.FAIL, used_seed, example),
                bug=bug,
            )
            for bug, (example, used_seed) in ordered
        ] + list(more)

    stored = sorted(database.fetch(key), key=len) if database else []
    for value in stored:
        target.examples += 1
        try:
            owner.fuzz_replay(target, json.loads(value))
        except PropertyFailure as failure:
            keep(failure, seed)
            continue
        except Unsupported:
            # Stored from an implementation that had an operation this one lacks as a whole:
            # nothing to replay here, and kept for the implementations that have it.
            continue
        assert database is not None
        database.delete(key, value)  # fixed since: forget it
    if found:
        return bugs()

    #: Signatures found by earlier runs (they pass now), and when this run first saw each.
    known: set[str] = set()
    first_seen: dict[str, int] = {}

    def test(value: Any, data: st.DataObject) -> None:
        target.examples += 1
        try:
            check(target, value, data)
            return
        except PropertyFailure as failure:
            caught = distinct(failure, options, name)
        assert caught.signature is not None
        if caught.signature in known:
            return  # found by an earlier run: look for the others
        first_seen.setdefault(caught.signature, target.examples - before)
        raise caught  # outside the except block: Hypothesis tells failures apart by context

    slice_seed = seed
    left = max_examples
    while True:
        if deadline is not None:
            budget = SLICE
        elif known:
            # Looking again for bugs besides those found: a slice at a time, on while each
            # slice finds another, so that a large budget does not keep a property that has
            # found its bugs searching for all of it.
            budget = min(left, SLICE)
        else:
            budget = left
        before = target.examples
        first_seen.clear()
        runner = settings(
            max_examples=budget,
            database=None,
            deadline=None,
            derandomize=False,
            report_multiple_bugs=True,
            suppress_health_check=list(HealthCheck),
            print_blob=False,
            # No explain phase: its extra runs would overwrite the shrunk counterexample.
            phases=[Phase.explicit, Phase.generate, Phase.target, Phase.shrink],
        )(hypothesis.given(owner.fuzz_inputs(options), st.data())(test))
        failures: list[PropertyFailure] = []
        try:
            hypothesis.seed(slice_seed)(runner)()
        except Unsupported as unsupported:
            return bugs(result(Verdict.SKIP, seed, reason=f"unsupported: {unsupported}"))
        except PropertyFailure as failure:
            failures = [failure]
        except BaseExceptionGroup as group:
            matched, rest = group.split(PropertyFailure)
            failures = _leaves(matched) if matched is not None else []
            if rest is not None:
                for item in failures:
                    keep(item, slice_seed)
                declined, other = rest.split(Unsupported)
                if declined is not None and other is None:
                    reason = f"unsupported: {_leaves(declined)[0]}"
                    return bugs(result(Verdict.SKIP, seed, reason=reason))
                return bugs(result(Verdict.ERROR, slice_seed, reason=_gave_up(rest)))
        except Exception as error:  # Hypothesis itself gave up: report it, do not crash
            return bugs(result(Verdict.ERROR, slice_seed, reason=_gave_up(error)))
        for item in failures:
            known.add(keep(item, slice_seed))
            if database is not None:
                database.save(key, json.dumps(item.example.input).encode())
        if deadline is not None:
            if time.monotonic() >= deadline:
                break
        else:
            left -= _generated(budget, first_seen)
            if not failures or left <= 0:
                break
        slice_seed += 1
    for bug, (example, used_seed) in list(found.items()):
        smaller = _smaller(name, target, check, bug, example, deadline)
        if smaller is not example:
            found[bug] = (smaller, used_seed)
            if database is not None:
                database.delete(key, json.dumps(example.input).encode())
                database.save(key, json.dumps(smaller.input).encode())
    if found:
        return bugs()
    note = target.non_strict
    return [result(Verdict.NON_STRICT if note else Verdict.PASS, seed, note)]


def _smaller(
    name: str,
    target: Target,
    check: Any,
    bug: str,
    example: Counterexample,
    deadline: float | None,
) -> Counterexample:
    """`example` after a last shrinking pass on its chunks (conformance/fuzz/minimize.py),
    for the normalizer's properties that judge their chunks alone (the chunking property
    draws a second chunking); not for an implementation that failed to answer (each try
    could wait out a timeout), nor past the deadline."""
    if example.contract is not None or example.error or name == "chunking":
        return example
    last: list[Counterexample] = []

    def still_fails(chunks: list[dict[str, Any]]) -> bool:
        if deadline is not None and time.monotonic() >= deadline:
            return False
        try:
            check(target, chunks, None)
        except PropertyFailure as failure:
            if signature(failure.example, target.options, name) == bug:
                last.append(failure.example)
                return True
        except Unsupported:
            pass
        return False

    if not still_fails(example.chunks):
        return example  # not a failure of its chunks alone (idempotence: of the answer)
    chunks = minimize(example.chunks, still_fails)
    return next((e for e in reversed(last) if e.chunks == chunks), example)


def _generated(budget: int, first_seen: dict[str, int]) -> int:
    """How many of a run's `budget` examples Hypothesis generated: all of them when it found
    nothing new, else as many as it goes on generating after a new failure (between ten
    calls and a thousand more than its first failure: its own rule)."""
    if not first_seen:
        return budget
    first, last = min(first_seen.values()), max(first_seen.values())
    return min(budget, max(10, min(first + 1000, last * 2)))


def _leaves(group: BaseExceptionGroup[Any]) -> list[Any]:
    """The exceptions in a group and its nested groups."""
    out: list[Any] = []
    for item in group.exceptions:
        out += _leaves(item) if isinstance(item, BaseExceptionGroup) else [item]
    return out


def _gave_up(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"
