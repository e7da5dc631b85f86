"""A scriptable protocol-1 implementation that misbehaves on purpose, to test the harness.

    python tests/fakes/fake_impl.py MODE [ARG] [MODE [ARG] ...]

Without a mode it is `echo`: every chunk's content goes to the assistant channel and its native
reasoning to the thinking channel, the final delta is empty. Modes change that:

    echo                 the default, correct trivial behaviour
    hang                 never answers a stream whose first chunk's content contains HANG
    crash                exits with status 3 on a request containing CRASH
    exit-after N         exits (status 0) after N replies to stream/whole requests
    garbage              for a request containing GARBAGE, prints a line that is not JSON
                         (it quotes the request, so a long request makes a long line)
    wrong-count          one delta too few
    missing-key          deltas (and whole replies) without `thinking`
    non-string           `thinking` is a number
    wrong-id             answers with another id
    extra-key            deltas carry an extra `debug` key (only --validate-protocol objects)
    stderr-spam          writes 1 MB to stderr per request
    slow S               sleeps S seconds per request
    error                answers {"id", "error"}
    unsupported-whole    answers {"id", "unsupported"} to whole requests
    stateful             keeps state across streams: after a stream that opened <think> and
                         did not close it, all later content goes to thinking
    no-hello             exits with status 1 at start, before reading anything
    bad-hello            answers hello with protocol 2
    garbage-hello        answers hello with a line that is not JSON
    no-metadata          answers hello without `implementation`
    hang-hello           never answers hello
    slow-start S         sleeps S seconds before answering hello, as a slow import does
    bad-options          declares an option value the spec does not have
    ignore-bye           ignores bye, and sleeps instead of exiting at end of input
    unsupported          answers {"id", "unsupported"} to every request
    pidfile PATH         writes its process ID to PATH at start
    once PATH            starts only once: if PATH exists it exits with status 1 at start
                         (so every restart fails), otherwise it creates PATH
    hang-on TEXT         never answers a stream that has a chunk whose content is TEXT
    batch                reads whatever the pipe holds and answers it all in one write
                         (as conformance.server does), so one hang holds back the batch
    close-stdout         closes standard output on a request containing CLOSE, and lives on
    escapes              writes terminal escape sequences to stderr and in error replies
    delimiters N         declares a grammar of N delimiter pairs in its hello
    huge-name N          declares an implementation name and version of N characters
    huge-error N         answers every request with an error message of N characters
    huge-unsupported N   answers every request `unsupported` with a message of N characters
    daemon PATH          starts a daemon (forked twice, in a session of its own) that
                         writes its process ID to PATH and sleeps

Modes combine: `crash stderr-spam` crashes after spamming. Only the standard library is used,
so it starts fast.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ARGUMENT_MODES = {
    "exit-after",
    "slow",
    "slow-start",
    "pidfile",
    "once",
    "hang-on",
    "delimiters",
    "huge-name",
    "huge-error",
    "huge-unsupported",
    "daemon",
}
ESCAPES = "\x1b[2J\x1b]0;pwned\x07"


def parse(argv: list[str]) -> dict[str, str | None]:
    modes: dict[str, str | None] = {}
    words = iter(argv)
    for word in words:
        modes[word] = next(words) if word in ARGUMENT_MODES else None
    return modes


def hello(modes: dict[str, str | None]) -> str:
    if "bad-hello" in modes:
        return json.dumps(
            {
                "protocol": 2,
                "implementation": {"name": "fake", "version": "2", "language": "python"},
            }
        )
    if "garbage-hello" in modes:
        return "Starting fake implementation..."
    if "no-metadata" in modes:
        return json.dumps({"protocol": 1, "options": {}})
    options: dict[str, Any] = {"matching": "fuzzy"} if "bad-options" in modes else {}
    if "delimiters" in modes:
        count = int(modes["delimiters"] or 0)
        options["delimiters"] = [{"open": f"<t{i}>", "close": f"</t{i}>"} for i in range(count)]
    name, version = "fake", "1.0"
    if "huge-name" in modes:
        name = version = "n" * int(modes["huge-name"] or 0)
    return json.dumps(
        {
            "protocol": 1,
            "implementation": {"name": name, "version": version, "language": "python"},
            "options": options,
        }
    )


def answer(request: dict[str, Any], modes: dict[str, str | None]) -> str:
    """The reply line for a stream or whole request."""
    ident = request["id"]
    if "wrong-id" in modes:
        ident = f"{ident}-wrong"
    if "escapes" in modes:
        return json.dumps({"id": ident, "error": f"deliberate {ESCAPES}failure"})
    if "error" in modes:
        return json.dumps({"id": ident, "error": "deliberate failure"})
    if "huge-error" in modes:
        return json.dumps({"id": ident, "error": "e" * int(modes["huge-error"] or 0)})
    if "huge-unsupported" in modes:
        return json.dumps({"id": ident, "unsupported": "u" * int(modes["huge-unsupported"] or 0)})
    if "unsupported" in modes:
        return json.dumps({"id": ident, "unsupported": "nothing is implemented"})
    if request["op"] == "whole":
        if "unsupported-whole" in modes:
            return json.dumps({"id": ident, "unsupported": "only streams are implemented"})
        return json.dumps({"id": ident, **delta(request["content"], request["reasoning"], modes)})
    if request["op"] != "stream":
        return json.dumps({"id": ident, "unsupported": f"unknown op {request['op']!r}"})
    if "stateful" in modes:
        return stateful(ident, request["chunks"])
    deltas = [delta(c["content"], c["reasoning"], modes) for c in request["chunks"]]
    deltas.append(delta(None, None, modes))
    if "wrong-count" in modes:
        deltas.pop()
    return json.dumps({"id": ident, "deltas": deltas})


#: The state `stateful` wrongly keeps between streams.
inside_block = False


def stateful(ident: str, chunks: list[dict[str, Any]]) -> str:
    global inside_block
    deltas = []
    for chunk in chunks:
        content = chunk["content"] or ""
        if inside_block:
            deltas.append({"assistant": "", "thinking": content})
        else:
            deltas.append({"assistant": content, "thinking": ""})
        if "<think>" in content and "</think>" not in content:
            inside_block = True
    deltas.append({"assistant": "", "thinking": ""})
    return json.dumps({"id": ident, "deltas": deltas})


def delta(content: str | None, reasoning: str | None, modes: dict[str, str | None]) -> Any:
    result: dict[str, Any] = {"assistant": content or "", "thinking": reasoning or ""}
    if "missing-key" in modes:
        del result["thinking"]
    if "non-string" in modes:
        result["thinking"] = len(reasoning or "")
    if "extra-key" in modes:
        result["debug"] = "extra"
    return result


def lines(modes: dict[str, str | None]) -> Iterator[list[str]]:
    """Request lines, one at a time or, in batch mode, as many as one read delivers."""
    if "batch" not in modes:
        for line in sys.stdin:
            yield [line]
        return
    pending = b""
    while data := os.read(0, 1 << 16):
        *complete, pending = (pending + data).split(b"\n")
        yield [line.decode() for line in complete if line.strip()]


def start_daemon(pidfile: Path) -> None:
    """The classic double fork: the daemon leaves the session and its parent exits."""
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            for fd in (0, 1, 2):
                os.close(fd)
            pidfile.write_text(str(os.getpid()))
            time.sleep(3600)
        os._exit(0)
    os.wait()


def main() -> int:
    modes = parse(sys.argv[1:])
    if "no-hello" in modes:
        print("fake: refusing to start (no-hello mode)", file=sys.stderr)
        return 1
    if "once" in modes:
        marker = Path(modes["once"] or "")
        if marker.exists():
            print("fake: started once already (once mode)", file=sys.stderr)
            return 1
        marker.touch()
    if "pidfile" in modes:
        Path(modes["pidfile"] or "").write_text(str(os.getpid()))
    if "daemon" in modes:
        start_daemon(Path(modes["daemon"] or ""))
    replies = 0
    for batch in lines(modes):
        out = []
        for line in batch:
            request = json.loads(line)
            op = request.get("op")
            if op == "bye" and "ignore-bye" not in modes:
                return 0
            if op == "bye":
                continue
            if op == "hello":
                if "hang-hello" in modes:
                    time.sleep(3600)
                time.sleep(float(modes.get("slow-start") or 0))
                print(hello(modes), flush=True)
                if "exit-after" in modes and int(modes["exit-after"] or 0) == 0:
                    print("fake: exiting after 0 replies", file=sys.stderr, flush=True)
                    return 0
                continue
            if "stderr-spam" in modes:
                sys.stderr.write(("spam " * 20 + "\n") * 10_000)  # 1,010,000 bytes
                sys.stderr.flush()
            if "escapes" in modes:
                print(f"fake: {ESCAPES}log line", file=sys.stderr, flush=True)
            if "slow" in modes:
                time.sleep(float(modes["slow"] or 0))
            if (
                "hang" in modes
                and op == "stream"
                and request["chunks"]
                and "HANG" in (request["chunks"][0]["content"] or "")
            ):
                print(f"fake: hanging on request {request['id']}", file=sys.stderr, flush=True)
                time.sleep(3600)
            if (
                "hang-on" in modes
                and op == "stream"
                and any(c["content"] == modes["hang-on"] for c in request["chunks"])
            ):
                time.sleep(3600)
            if "crash" in modes and "CRASH" in line:
                print(f"fake: crashing on request {request['id']}", file=sys.stderr, flush=True)
                return 3
            if "close-stdout" in modes and "CLOSE" in line:
                sys.stdout.close()
                os.close(1)
                time.sleep(3600)
            if "garbage" in modes and "GARBAGE" in line:
                out.append(f"this is not JSON: {line.strip()}")
            else:
                out.append(answer(request, modes))
                replies += 1
            if "exit-after" in modes and replies >= int(modes["exit-after"] or 0):
                print("\n".join(out), flush=True)
                print(f"fake: exiting after {replies} replies", file=sys.stderr, flush=True)
                return 0
            if "batch" not in modes:
                print("\n".join(out), flush=True)
                out = []
        if out:
            print("\n".join(out), flush=True)
    if "ignore-bye" in modes:
        time.sleep(3600)
    return 0


if __name__ == "__main__":
    sys.exit(main())
