"""Serve a Python normalizer over the implementation protocol (docs/PROTOCOL.md).

    from conformance.server import serve
    serve(MyNormalizer, {"name": "mine", "version": "1.0", "language": "python"})
    # reads requests on stdin, answers on stdout

Run as a program, it serves the reference normalizer, for every registered contract, under
the policy options given as JSON (the protocol's worked example):

    python -m conformance.server [--options JSON]
    conformance run --impl "cmd:python -m conformance.server"

A protocol program starts light: this module imports neither jsonschema nor Hypothesis nor
the harness (tests/test_public_api.py).
"""

from __future__ import annotations

import argparse
import json
import sys

from conformance._version import __version__
from conformance.contracts import ReferenceImplementation
from conformance.reference import Options, OptionsError, normalize_whole
from conformance.transport.protocol_server import Handler, serve, serve_handler

__all__ = ["serve"]


def main(argv: list[str] | None = None) -> int:
    """`python -m conformance.server`: the reference as a protocol-1 program."""
    parser = argparse.ArgumentParser(
        prog="python -m conformance.server",
        description="The reference normalizer, speaking the implementation protocol "
        "(docs/PROTOCOL.md) on standard input and output.",
    )
    parser.add_argument(
        "--options",
        default="{}",
        metavar="JSON",
        help='policy options as a JSON object, e.g. \'{"matching": "tolerant"}\'',
    )
    args = parser.parse_args(argv)
    try:
        options = Options.from_mapping(json.loads(args.options))
    except (ValueError, OptionsError) as error:
        parser.error(f"--options: {error}")
    handler = Handler(
        factory=lambda: ReferenceImplementation(options),
        implementation={"name": "reference", "version": __version__, "language": "python"},
        options=options.to_json(),
        whole=lambda content, reasoning: normalize_whole(content, reasoning, options),
        trusted=True,
    )
    serve_handler(handler)
    return 0


if __name__ == "__main__":
    sys.exit(main())
