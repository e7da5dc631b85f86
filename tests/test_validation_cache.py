"""An unchanged case file is schema-validated once; problems are found every time."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from conformance.corpus import validation
from conformance.corpus.cases import bundled_cases_dir, load_corpus


@pytest.fixture
def validations(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[int]:
    """Counts the documents validated against a schema, with a fresh cache directory."""
    monkeypatch.setenv("CONFORMANCE_CACHE_DIR", str(tmp_path / "cache"))
    done: list[int] = []
    real = validation._errors

    def counting(*args: Any) -> list[Any]:
        done.append(1)
        return real(*args)

    monkeypatch.setattr(validation, "_errors", counting)
    return done


def test_a_valid_file_is_validated_once(validations: list[int], tmp_path: Path) -> None:
    cases = tmp_path / "cases"
    cases.mkdir()
    shutil.copy(bundled_cases_dir() / "orphan.yaml", cases)
    first = load_corpus([cases])
    assert validations == [1] and not first.errors
    second = load_corpus([cases])
    assert validations == [1]
    assert second.cases == first.cases
    (cases / "orphan.yaml").write_text(
        (cases / "orphan.yaml").read_text("utf-8") + "\n# changed\n", "utf-8"
    )
    load_corpus([cases])
    assert validations == [1, 1]


def test_an_invalid_file_is_reported_every_time(validations: list[int], tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text("category: text\ncases: [{id: 1}]\n", "utf-8")
    for _ in range(2):
        assert load_corpus([tmp_path]).errors
    assert validations == [1, 1]


def test_the_cache_can_be_turned_off(
    validations: list[int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONFORMANCE_CACHE_DIR", "off")
    shutil.copy(bundled_cases_dir() / "orphan.yaml", tmp_path)
    load_corpus([tmp_path])
    load_corpus([tmp_path])
    assert validations == [1, 1]
