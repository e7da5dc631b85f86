"""Layer 2 (reference): the reference normalizer, the executable form of SPEC.md.

    >>> from conformance.reference import normalize_whole
    >>> normalize_whole("<think>plan</think>Answer")
    {'assistant': 'Answer', 'thinking': 'plan'}

`python -m conformance.server` serves it as a protocol-1 implementation.
"""

from conformance.model.options import Options, OptionsError

from ._normalizer import Delta, Normalizer, join, normalize_stream, normalize_whole

__all__ = [
    "Delta",
    "Normalizer",
    "Options",
    "OptionsError",
    "join",
    "normalize_stream",
    "normalize_whole",
]
