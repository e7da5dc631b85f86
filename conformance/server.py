"""Serve a Python normalizer over the implementation protocol (docs/PROTOCOL.md).

from conformance.server import serve
serve(MyNormalizer)    # reads requests on stdin, answers on stdout
"""

from conformance.transport.protocol_server import serve

__all__ = ["serve"]
