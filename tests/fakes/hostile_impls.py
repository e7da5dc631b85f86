"""`python:` implementations that attack the harness's process on purpose: they exit it,
raise what `except Exception` does not catch, hang, crash the interpreter, or return
strings that misbehave. Each does so only on content containing a trigger word, so that the
same run shows the other requests judged normally.

    conformance run --impl python:tests.fakes.hostile_impls:ExitsOnExit
"""

from __future__ import annotations

import ctypes
import os
import sys
import time
from typing import Any

from conformance.interface import Chunk, Delta
from conformance.reference import Normalizer


class _Trigger(Normalizer):
    """The reference, except on content containing `WORD`."""

    WORD = ""

    def feed(self, chunk: Chunk) -> Delta:
        if self.WORD in (chunk.get("content") or ""):
            self.attack()
        return super().feed(chunk)

    def attack(self) -> None:
        raise NotImplementedError


class ExitsOnExit(_Trigger):
    WORD = "EXIT"

    def attack(self) -> None:
        sys.exit(0)


class ExitsOnCloseTag(ExitsOnExit):
    WORD = "</think>"


class InterruptsOnInterrupt(_Trigger):
    WORD = "INTERRUPT"

    def attack(self) -> None:
        raise KeyboardInterrupt


class GeneratorExitOnStop(_Trigger):
    WORD = "STOP"

    def attack(self) -> None:
        raise GeneratorExit


class HardExitsOnExit(_Trigger):
    """Ends its process without cleanup: only `python-isolated:` survives it."""

    WORD = "EXIT"

    def attack(self) -> None:
        os._exit(7)


class SegfaultsOnCrash(_Trigger):
    WORD = "CRASH"

    def attack(self) -> None:
        ctypes.string_at(0)


class SleepsOnHang(_Trigger):
    """Sleeps (practically) forever, and swallows the first attempt to stop it."""

    WORD = "HANG"

    def attack(self) -> None:
        try:
            time.sleep(3600)
        except BaseException:
            time.sleep(3600)


class HangsOnLessThan(Normalizer):
    """Hangs on every chunk that is exactly `<` (issue 12's 90-second target)."""

    def feed(self, chunk: Chunk) -> Delta:
        if chunk.get("content") == "<":
            time.sleep(3600)
        return super().feed(chunk)


class _Evil(str):
    """A string whose comparisons, hash and length lie or raise."""

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("evil __eq__")

    def __ne__(self, other: object) -> bool:
        raise RuntimeError("evil __ne__")

    def __hash__(self) -> int:
        raise RuntimeError("evil __hash__")

    def __len__(self) -> int:
        return -1

    def __str__(self) -> str:
        return "not the text"

    def __add__(self, other: Any) -> str:
        raise RuntimeError("evil __add__")


class ReturnsStrSubclass(Normalizer):
    def feed(self, chunk: Chunk) -> Delta:
        delta = super().feed(chunk)
        return {key: _Evil(value) for key, value in delta.items()}

    def finish(self) -> Delta:
        return {key: _Evil(value) for key, value in super().finish().items()}


def split(content: str) -> tuple[str, str]:
    """What people write first: a plain function, not a factory of normalizers."""
    return content, ""


class PrintsEscapes(_Trigger):
    """Puts terminal escape sequences into its error messages."""

    WORD = "ESC"

    def attack(self) -> None:
        raise ValueError("\x1b[2J\x1b]0;pwned\x07cleared your screen")


class Slow(Normalizer):
    """Right, but slow: 5 ms per chunk, so a default run takes minutes (for stopping it)."""

    def feed(self, chunk: Chunk) -> Delta:
        time.sleep(0.005)
        return super().feed(chunk)


class RetriesForever(Normalizer):
    """Slow, and each chunk is fed in a retry loop whose bare `except` swallows everything
    raised into it: nothing raised inside it can stop it."""

    def feed(self, chunk: Chunk) -> Delta:
        while True:
            try:
                time.sleep(0.005)
                return super().feed(chunk)
            except:  # noqa: E722 - on purpose: this is the attack
                continue


class HangsOnThink(Normalizer):
    """Hangs on every chunk containing `<think>`, in a loop that swallows everything: a third
    of the requests of a default run, no two sharing a chunk."""

    def feed(self, chunk: Chunk) -> Delta:
        while "<think>" in (chunk.get("content") or ""):
            try:
                time.sleep(3600)
            except:  # noqa: E722 - on purpose: this is the attack
                continue
        return super().feed(chunk)


def exits_in_factory() -> Normalizer:
    """A factory that calls `sys.exit(0)` instead of returning a normalizer."""
    sys.exit(0)


def interrupts_in_factory() -> Normalizer:
    """A factory that raises `KeyboardInterrupt` itself (no one pressed Ctrl-C)."""
    raise KeyboardInterrupt


class Prints(Normalizer):
    """Prints as it works, as debugging code and chatty libraries do: when made, and at every
    chunk, to standard output, and once straight to file descriptor 1, as C code would."""

    def __init__(self) -> None:
        super().__init__()
        print("made a normalizer")
        os.write(1, b"from C, say\n")

    def feed(self, chunk: Chunk) -> Delta:
        print(f"feeding {chunk!r}")
        return super().feed(chunk)


class ChangesDirectory(Normalizer):
    """Changes the working directory of its process at every stream, as a library that
    `os.chdir`s into a cache or temporary directory does."""

    def __init__(self) -> None:
        super().__init__()
        os.chdir(os.environ.get("CONFORMANCE_TEST_CHDIR", "/"))
