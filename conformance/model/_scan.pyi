"""The delimiter scan of exact grammars, in C (`_scan.c`)."""

MAX_NEEDLES: int
MAX_CHARS: int

def scan(
    needles: tuple[str, ...], tags: tuple[bool, ...], anchor: str, text: str, /
) -> int | tuple[tuple[tuple[int, int, bool], ...], int]: ...
