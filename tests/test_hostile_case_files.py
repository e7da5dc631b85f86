"""Case files that would make a YAML loader blow up are refused fast, with file:line."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from conformance.corpus.cases import MAX_DEPTH, load_corpus


def billion_laughs(levels: int = 12) -> str:
    lines = ["category: text", 'a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for level in range(1, levels):
        lines.append(f"a{level}: &a{level} [" + ", ".join([f"*a{level - 1}"] * 9) + "]")
    lines.append(f"cases: *a{levels - 1}")
    return "\n".join(lines) + "\n"


def test_an_alias_bomb_is_refused_in_well_under_a_second(tmp_path: Path) -> None:
    (tmp_path / "bomb.yaml").write_text(billion_laughs(), "utf-8")
    started = time.perf_counter()
    corpus = load_corpus([tmp_path])
    assert time.perf_counter() - started < 1
    assert not corpus.cases
    (error,) = corpus.errors
    assert error.file.name == "bomb.yaml" and error.line == 2
    assert "aliases" in error.message


def test_any_alias_is_refused(tmp_path: Path) -> None:
    (tmp_path / "alias.yaml").write_text(
        "category: text\nshared: &s {content: a}\ncases:\n  - *s\n", "utf-8"
    )
    (error,) = load_corpus([tmp_path]).errors
    assert "aliases" in error.message


@pytest.mark.parametrize("depth", [MAX_DEPTH + 5, 20_000])
def test_deep_nesting_is_refused(tmp_path: Path, depth: int) -> None:
    (tmp_path / "deep.yaml").write_text(
        "category: text\ncases: " + "[" * depth + "]" * depth + "\n", "utf-8"
    )
    started = time.perf_counter()
    (error,) = load_corpus([tmp_path]).errors
    assert time.perf_counter() - started < 1
    assert error.file.name == "deep.yaml" and error.line == 2
    assert "nest" in error.message


def test_duplicate_keys_are_still_reported_with_their_line(tmp_path: Path) -> None:
    (tmp_path / "dup.yaml").write_text("category: text\ncategory: text\ncases: []\n", "utf-8")
    errors = load_corpus([tmp_path]).errors
    assert any(e.line == 2 and "duplicate key 'category'" in e.message for e in errors)
