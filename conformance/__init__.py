"""Conformance suite and fuzzing harness for reasoning-channel normalizers."""

__version__ = "0.1.0"
#: The version of SPEC.md the corpus and the reference implement.
SPEC_VERSION = "1.0"
#: The implementation protocol version this harness speaks.
PROTOCOL_VERSION = 1

__all__ = ["PROTOCOL_VERSION", "SPEC_VERSION", "__version__"]
