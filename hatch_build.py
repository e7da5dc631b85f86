"""Builds the C scan of exact grammars (`conformance/model/_scan.c`) into the wheel.

The scan is optional: without a working C compiler the wheel is built without it, a warning
says so, and the grammar scans with its regular expressions instead (same results, slower on
long chunks; docs/bench.md). setuptools drives the compiler, as it knows every platform's.
An editable install builds the module next to its source, where the checkout is imported.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

#: The extension's import name and its source, relative to the project root.
MODULE = "conformance.model._scan"
SOURCE = "conformance/model/_scan.c"


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
        except Exception as error:  # any compiler or toolchain failure: build without it
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
