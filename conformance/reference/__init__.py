"""The reference normalizer: the executable form of SPEC.md.

    >>> from conformance.reference import normalize_whole
    >>> normalize_whole("<think>plan</think>Answer")
    {'assistant': 'Answer', 'thinking': 'plan'}

Run it as a protocol-1 implementation with `python -m conformance.reference`.
"""

from typing import Any

from .._options import Options, OptionsError
from ._normalizer import Delta, Normalizer, join, normalize_stream, normalize_whole


class ReferenceImplementation(Normalizer):
    """The reference for every contract: the normalizer, plus the ops of the other
    contracts (docs/contracts.md), each answered by that contract's reference."""

    def render(self, **payload: Any) -> dict[str, Any]:
        from ..contracts import contract

        return contract("render").reference(payload)

    def egress(self, **payload: Any) -> dict[str, Any]:
        from ..contracts import contract

        return contract("egress").reference(payload)


__all__ = [
    "Delta",
    "Normalizer",
    "Options",
    "OptionsError",
    "ReferenceImplementation",
    "join",
    "normalize_stream",
    "normalize_whole",
]
