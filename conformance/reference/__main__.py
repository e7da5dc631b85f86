"""`python -m conformance.reference [--options JSON]`: the reference as a protocol-1 program."""

from __future__ import annotations

import argparse
import json
import sys

from conformance._version import __version__
from conformance.contracts import ReferenceImplementation
from conformance.reference import Options, OptionsError, normalize_whole
from conformance.transport.protocol_server import Handler, serve_handler


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m conformance.reference",
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
    )
    serve_handler(handler)
    return 0


if __name__ == "__main__":
    sys.exit(main())
