"""The llama.cpp adapters' build: where the program is cached, how an adapter says it is not
built, and the sdist extraction's guard. The build itself runs in CI (.ci/run) and the
adapters' runs are tests/test_adapters.py."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from conformance.adapters import ADAPTERS, llamacpp_build, llamacpp_program
from conformance.adapters.adapter import Adapter, shown


def test_the_program_is_cached_outside_the_checkout_by_version(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert llamacpp_program.binary_path("9.9.9") == (
        tmp_path / "reasoning-conformance" / "llamacpp" / "9.9.9" / "bin" / "conformance_llamacpp"
    )
    assert (
        llamacpp_program.templates_dir("9.9.9")
        == tmp_path / "reasoning-conformance" / "llamacpp" / "9.9.9" / "templates"
    )
    monkeypatch.delenv("XDG_CACHE_HOME")
    default = llamacpp_program.cache_root()
    assert default == Path.home() / ".cache" / "reasoning-conformance" / "llamacpp"
    assert not default.is_relative_to(Path(llamacpp_program.__file__).parents[2])


def test_every_llamacpp_adapter_runs_the_cached_program_on_a_template_of_its_version() -> None:
    ours = [a for a in ADAPTERS if a.label.startswith("llamacpp-")]
    assert len(ours) >= 4
    for candidate in ours:
        assert candidate.binary == str(llamacpp_program.binary_path())
        assert candidate.spec.startswith(f"cmd:{candidate.binary} --template ")
        assert str(llamacpp_program.templates_dir()) in candidate.spec
        assert candidate.install == llamacpp_program.build_command()
        assert "~/.cache/reasoning-conformance/llamacpp/" in candidate.shown_spec


def test_an_adapter_whose_program_is_not_built_says_how_to_build_it(tmp_path: Path) -> None:
    missing = Adapter(
        "x", "cmd:nothing", "Nothing", "python -m build-it", binary=str(tmp_path / "prog")
    )
    reason = missing.unavailable()
    assert reason is not None and "is not built; python -m build-it" in reason
    (tmp_path / "prog").write_text("")
    assert missing.unavailable() is None


def test_shown_paths_put_the_home_directory_as_a_tilde() -> None:
    assert shown(f"{Path.home()}/.cache/x") == "~/.cache/x"


def _archive(tmp_path: Path, name: str) -> Path:
    path = tmp_path / "sdist.tar.gz"
    with tarfile.open(path, "w:gz") as archive:
        member = tarfile.TarInfo(name)
        member.size = 2
        archive.addfile(member, io.BytesIO(b"hi"))
    return path


def test_the_sdist_may_not_write_outside_the_cache(tmp_path: Path) -> None:
    with tarfile.open(_archive(tmp_path, "pkg/ok.txt")) as archive:
        assert [m.name for m in llamacpp_build._safe_members(archive, tmp_path)] == ["pkg/ok.txt"]
    with (
        tarfile.open(_archive(tmp_path, "../escape.txt")) as archive,
        pytest.raises(RuntimeError, match="outside"),
    ):
        llamacpp_build._safe_members(archive, tmp_path / "inside")


def test_the_sources_digest_follows_content_not_the_checkout_path(tmp_path: Path) -> None:
    copies = [tmp_path / "one", tmp_path / "two"]
    for copy in copies:
        (copy / "sub").mkdir(parents=True)
        (copy / "CMakeLists.txt").write_text("project(x)\n")
        (copy / "sub" / "main.cpp").write_text("int main() {}\n")
    digests = {llamacpp_program.sources_digest(copy) for copy in copies}
    assert len(digests) == 1
    (copies[1] / "sub" / "main.cpp").write_text("int main() { return 1; }\n")
    assert llamacpp_program.sources_digest(copies[1]) not in digests


def test_a_program_built_from_these_sources_is_not_built_again(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    binary = llamacpp_program.binary_path("9.9.9")
    binary.parent.mkdir(parents=True)
    binary.write_text("")
    assert not llamacpp_program.is_current("9.9.9")  # built, but from unknown sources
    llamacpp_program.stamp_path("9.9.9").write_text("0" * 64 + "\n")
    assert not llamacpp_program.is_current("9.9.9")  # from other sources
    llamacpp_program.stamp_path("9.9.9").write_text(llamacpp_program.sources_digest() + "\n")
    assert llamacpp_program.is_current("9.9.9")
    # Nothing is downloaded or compiled: the step that would be is made to fail.
    monkeypatch.setattr(llamacpp_build, "_timed", lambda *a, **k: pytest.fail("built again"))
    assert llamacpp_build.build("9.9.9") == binary
    assert "is built from these sources" in capsys.readouterr().out


def test_a_build_directory_configured_from_another_checkout_is_reconfigured(
    tmp_path: Path,
) -> None:
    assert llamacpp_build._configured_elsewhere(tmp_path) is None  # never configured
    cache = tmp_path / "CMakeCache.txt"
    here = llamacpp_program.SOURCE_DIR.resolve()
    cache.write_text(f"X:STRING=1\nCMAKE_HOME_DIRECTORY:INTERNAL={here}\n")
    assert llamacpp_build._configured_elsewhere(tmp_path) is None
    cache.write_text("CMAKE_HOME_DIRECTORY:INTERNAL=/elsewhere/llamacpp\n")
    assert llamacpp_build._configured_elsewhere(tmp_path) == "/elsewhere/llamacpp"
