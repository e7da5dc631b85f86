"""Line framing and safe quoting: the byte level of the protocol, shared by both ends.

`LineBuffer` is the only place that turns bytes read from a pipe into protocol lines; the
subprocess transport and the protocol server both feed it whatever `os.read` returned.
"""

from __future__ import annotations

import re

#: A line longer than this is handed on cut, rather than buffered forever: whoever reads it
#: reports it as unreadable.
MAX_LINE_BYTES = 1 << 28
#: How much of a cut line is kept for the message that quotes it.
CUT_LINE_BYTES = 1 << 16
#: How much of an offending line a message quotes.
QUOTE_CHARS = 200

# C0 controls but tab and newline, DEL and the C1 controls: an escape sequence in an
# implementation's stderr or message must not reach the user's terminal (or a CI log viewer)
# as a command.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


class LineBuffer:
    """Bytes in, complete lines out (without their `\\n`), in order.

    Only the `\\n` byte ends a line: JSON escapes every newline inside a string, and U+2028 or
    U+0085 are text, never line breaks.
    """

    __slots__ = ("_pending", "_pending_size", "max_line")

    def __init__(self, max_line: int = MAX_LINE_BYTES) -> None:
        # Pieces of the line not yet ended: joined once when it ends, since joining on every
        # read would make long lines quadratic.
        self._pending: list[bytes] = []
        self._pending_size = 0
        self.max_line = max_line

    def feed(self, data: bytes) -> list[bytes]:
        """The lines `data` completes (possibly none)."""
        if b"\n" not in data:
            self._keep(data)
            return self._runaway()
        lines = data.split(b"\n")
        if self._pending:
            self._pending.append(lines[0])
            lines[0] = b"".join(self._pending)
            self._pending.clear()
            self._pending_size = 0
        last = lines.pop()
        if last:
            self._keep(last)
            lines.extend(self._runaway())
        return lines

    def _keep(self, data: bytes) -> None:
        self._pending.append(data)
        self._pending_size += len(data)

    def _runaway(self) -> list[bytes]:
        if self._pending_size <= self.max_line:
            return []
        line = b"".join(self._pending)[:CUT_LINE_BYTES]
        self._pending.clear()
        self._pending_size = 0
        return [line]

    @property
    def unfinished(self) -> bytes:
        """What was read after the last newline."""
        return b"".join(self._pending)


def escape_controls(text: str) -> str:
    """`text` with control characters (but newline and tab) shown as `\\x1b`-style escapes."""
    return _CONTROL.sub(lambda match: f"\\x{ord(match.group()):02x}", text)


def quote(line: bytes | str) -> str:
    """A line for a message: decoded, cut at QUOTE_CHARS characters, as a Python literal."""
    text = line.decode("utf-8", "replace") if isinstance(line, bytes) else line
    if len(text) > QUOTE_CHARS:
        text = text[:QUOTE_CHARS] + f"... ({len(text)} characters)"
    return repr(text)
