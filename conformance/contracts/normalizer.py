"""The normalizer contract (SPEC.md): the registry's first entry.

Its cases are the files without a `contract:` key; its protocol ops are `whole` and `stream`
(docs/PROTOCOL.md), answered by the reference normalizer. Unlike the op contracts beside
it, planning and judging it depend on the run's option profile (each case's expectation
per profile, split points from the grammar) and on the reference (holdback, measured
delta by delta), so the engine drives it (engine/plans.py, engine/judging.py) and the fuzz
layer owns its properties (fuzz/checks.py).
"""

from __future__ import annotations

__all__ = ["CHECKS", "NAME", "PROPERTIES", "SCHEMA"]

NAME = "normalizer"
SCHEMA = "case-file.schema.json"
#: The checks, in the order they run for each case.
CHECKS = ("whole", "stream", "chars", "splits")
#: The fuzzing properties (SPEC.md 13).
PROPERTIES = (
    "differential",
    "chunking",
    "whole",
    "discipline",
    "idempotence",
    "conservation",
)
