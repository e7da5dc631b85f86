"""The `conformance fuzz` command line that replays a fuzzing result: the same implementation
under the same label (so the replayed result lands in the same report column and expectation
file), the same options, seed and budget, without the example database."""

from __future__ import annotations

import functools
import json
import shlex

from conformance.errors import ConformanceError
from conformance.model.results import FuzzResult, ImplementationInfo, ImplementationRun, Run
from conformance.transport.spec import parse_impl

from ._common import fuzz_selection, option_differences, session_seed


def impl_argument(info: ImplementationInfo) -> str:
    """The `--impl` value naming this implementation: `NAME=SPEC` unless the spec alone gives
    the same label."""
    return info.spec if _default_label(info.spec) == info.label else f"{info.label}={info.spec}"


@functools.lru_cache(maxsize=64)
def _default_label(spec: str) -> str | None:
    """The label `spec` alone gives (worked out once: every failure's rerun command asks)."""
    try:
        return parse_impl(spec).label
    except ConformanceError:
        return None


def fuzz_command(
    info: ImplementationInfo,
    seed: int,
    *,
    prop: str | None = None,
    max_examples: int | None = None,
) -> str:
    words = ["conformance", "fuzz", "--impl", impl_argument(info)]
    differences = option_differences(info.options)
    if differences:
        words += ["--options", json.dumps(differences, ensure_ascii=False)]
    if prop is not None:
        words += ["--property", prop]
    if max_examples:
        words += ["--max-examples", str(max_examples)]
    words += ["--seed", str(seed), "--database", "none"]
    return shlex.join(words)


def replay_command(
    run: Run, implementation: ImplementationRun, result: FuzzResult | None = None
) -> str:
    """The command that replays a session (or one property of it)."""
    session = fuzz_selection(run)
    seed = result.seed if result is not None else session_seed(run, implementation)
    # A time budget runs slices of examples, each seeded anew (the result's seed says which);
    # only a count of examples replays as a count.
    count = session.get("max_examples") if not session.get("seconds") else None
    return fuzz_command(
        implementation.info,
        seed,
        prop=result.property if result is not None else None,
        max_examples=count if isinstance(count, int) else None,
    )
