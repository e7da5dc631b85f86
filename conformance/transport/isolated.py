"""`python -m conformance.transport.isolated package.module:attr`: the child process of a
`python-isolated:` implementation. It serves the factory over protocol 1 on its standard
input and output, so that whatever the implementation does to its process (`os._exit`, a
segfault, a hang) is reported by the harness as that request's ERROR or TIMEOUT.

When the factory cannot be imported or is not a factory, the child answers `hello` with an
error saying why, which the harness shows as a start failure.
"""

from __future__ import annotations

import json
import os
import sys
from typing import BinaryIO

from conformance.interface import metadata
from conformance.transport.codec import refuse_hello
from conformance.transport.factories import check_factory, import_factory
from conformance.transport.protocol_server import Handler, serve_handler


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(
            "usage: python -m conformance.transport.isolated package.module:attr", file=sys.stderr
        )
        return 2
    target = argv[0]
    protocol = _protocol_pipe()
    try:
        factory = import_factory(target)
        check_factory(factory, target)
    except ValueError as error:
        _refuse(str(error), protocol)
        return 0
    declared = metadata(factory)
    implementation = {key: str(declared[key]) for key in ("name", "version", "language")}
    serve_handler(Handler(factory, implementation, declared["options"]), stdout=protocol, each=True)
    return 0


def _protocol_pipe() -> BinaryIO:
    """The protocol's own copy of standard output; standard output itself becomes standard
    error. An implementation that prints (a debug line, a library's banner, at import or in
    `feed`) would otherwise write into the reply stream and put every reply out of step:
    this way its output lands in the stderr tail the harness shows with a failure."""
    sys.stdout.flush()
    protocol = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # file descriptor 1 too, for C extensions and child processes
    sys.stdout = sys.stderr
    return protocol


def _refuse(message: str, protocol: BinaryIO) -> None:
    """Answer the hello that comes first with `message`, and end."""
    os.read(0, 1 << 16)
    reply = {**refuse_hello(None), "error": message}
    protocol.write(json.dumps(reply).encode() + b"\n")
    protocol.flush()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
