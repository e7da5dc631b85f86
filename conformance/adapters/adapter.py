"""One adapter of the matrix: what it drives, how to install its library, and whether it can
run here."""

from __future__ import annotations

import importlib
import shutil
from dataclasses import dataclass
from pathlib import Path

NODE_DIR = Path(__file__).parent / "node"


@dataclass(frozen=True, slots=True)
class Adapter:
    """One implementation variant of a public library."""

    label: str
    #: The implementation spec `--impl` takes.
    spec: str
    #: The library, as its users know it, and the extra (or command) that installs it.
    library: str
    install: str
    #: What the adapter drives, in one sentence.
    about: str = ""
    language: str = "python"
    #: The module whose import proves the library is there (python adapters).
    module: str | None = None
    #: Whether the library is driven through HTTP on 127.0.0.1 (a client library): a stream
    #: costs a request and the client's own work, 10 to 100 times an in-process parser's.
    over_http: bool = False
    #: The npm package whose presence proves the library is there (node adapters).
    npm_package: str = "ai"
    #: The built program a `cmd:` adapter runs, when it is not on PATH (llama.cpp's is built
    #: into a cache by `install`).
    binary: str | None = None

    @property
    def shown_spec(self) -> str:
        return shown(self.spec)

    @property
    def shown_install(self) -> str:
        return shown(self.install)

    def unavailable(self) -> str | None:
        """Why this adapter cannot run here, or None when it can."""
        if self.module is not None:
            try:
                importlib.import_module(self.module)
            except Exception as error:  # whatever the library raises on import
                problem = f"{type(error).__name__}: {error}"
                return f"{self.library} cannot be imported ({problem}); {self.install}"
            return None
        if self.binary is not None:
            if not Path(self.binary).is_file():
                return f"{shown(self.binary)} is not built; {self.install}"
            return None
        if shutil.which("node") is None:
            return f"node is not on PATH; {self.install}"
        if not (NODE_DIR / "node_modules" / self.npm_package / "package.json").exists():
            package = self.npm_package
            return f"the npm package `{package}` is not installed in {NODE_DIR}; {self.install}"
        return None


def shown(text: str) -> str:
    """Text as documentation shows it: this package's paths relative to the repository, the
    home directory (where built programs are cached) as ~."""
    text = text.replace(str(Path(__file__).parent), "conformance/adapters")
    return text.replace(str(Path.home()) + "/", "~/")
