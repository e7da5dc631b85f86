"""The versions of the package, of SPEC.md and of the implementation protocol.

They sit below every layer so that any module can name them without importing the public
API in `conformance/__init__.py`.
"""

__version__ = "0.1.0"
#: The version of SPEC.md the corpus and the reference implement.
SPEC_VERSION = "1.1"
#: The implementation protocol version this harness speaks.
PROTOCOL_VERSION = 1
