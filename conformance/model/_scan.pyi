"""The delimiter scan of exact grammars, in C (`_scan.c`)."""

MAX_NEEDLES: int
MAX_CHARS: int
#: 1 where built with GCC or Clang vector extensions, 0 for the portable loop.
VECTORS: int

def scan(
    needles: tuple[str, ...], tags: tuple[bool, ...], anchor: str, text: str, /
) -> int | tuple[tuple[tuple[int, int, bool], ...], int]: ...
