"""Builds the C scan of exact grammars (`conformance/model/_scan.c`) into the wheel.

The scan is optional: without a working C compiler the wheel is built without it, a warning
says so, and the grammar scans with its regular expressions instead (same results, slower on
long chunks; docs/bench.md). Only the compiler's and the toolchain's failures are taken that
way, as markupsafe's setup.py takes them: any other exception is a bug of the build and
propagates. With CONFORMANCE_REQUIRE_C_SCAN set (CI, release wheels) a failed build is
fatal. setuptools drives the compiler, as it knows every platform's. An editable install
builds the module next to its source, where the checkout is imported.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

#: The extension's import name and its source, relative to the project root.
MODULE = "conformance.model._scan"
SOURCE = "conformance/model/_scan.c"
#: Set (to a non-empty value), a scan that cannot be built fails the build.
REQUIRE = "CONFORMANCE_REQUIRE_C_SCAN"


def toolchain_errors() -> tuple[type[Exception], ...]:
    """What a missing or failing compiler raises: setuptools wraps a compiler that cannot be
    started (OSError) in these too. In setuptools' own distutils, CompileError and LinkError
    derive from CCompilerError."""
    from setuptools.errors import CCompilerError, ExecError, PlatformError

    return (CCompilerError, ExecError, PlatformError)


def build_extension(root: Path, build_lib: Path | None) -> Path:
    """Compile the scan into `build_lib`, or next to its source when it is None; returns the
    built file. Raises whatever the compiler or setuptools raise when it cannot be built."""
    from setuptools import Distribution, Extension
    from setuptools.command.build_ext import build_ext

    distribution = Distribution(
        {"name": "reasoning-conformance", "ext_modules": [Extension(MODULE, [SOURCE])]}
    )
    with tempfile.TemporaryDirectory() as temp, contextlib.chdir(root):
        command = build_ext(distribution)
        command.build_temp = temp
        command.inplace = build_lib is None
        if build_lib is not None:
            command.build_lib = str(build_lib)
        command.ensure_finalized()
        command.run()
        return root / command.get_ext_fullpath(MODULE)


class CustomBuildHook(BuildHookInterface):
    """hatchling's hook (`[tool.hatch.build.targets.wheel.hooks.custom]`)."""

    build_lib: Path | None = None

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        editable = version == "editable"
        if not editable:
            self.build_lib = Path(tempfile.mkdtemp(prefix="conformance-scan-"))
        try:
            built = build_extension(Path(self.root), self.build_lib)
        except toolchain_errors() as error:
            if os.environ.get(REQUIRE):
                raise RuntimeError(
                    f"reasoning-conformance: the C scan ({SOURCE}) could not be built and "
                    f"{REQUIRE} is set, so the build fails: {error}"
                ) from error
            self.app.display_warning(
                f"reasoning-conformance: the C scan ({SOURCE}) was not built ({error}); "
                "the reference normalizer scans with regular expressions instead, with the "
                "same results, slower on long chunks. Install a C compiler and reinstall to "
                "build it."
            )
            return
        if self.build_lib is not None:
            # A wheel for this platform and interpreter, with the module in it.
            build_data["pure_python"] = False
            build_data["infer_tag"] = True
            build_data["force_include"][str(built)] = str(built.relative_to(self.build_lib))

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        if self.build_lib is not None:
            shutil.rmtree(self.build_lib, ignore_errors=True)
