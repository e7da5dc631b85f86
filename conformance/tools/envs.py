"""One cached environment per (library, release), so an adapter can be run against any
release of the library it drives.

    env = ensure_env(package("litellm"), "1.80.0", echo=print)   # built once, then reused
    spec = versioned_spec(adapter("litellm-ollama"), env)       # an `--impl` spec

Environments live in the cache directory (`$CONFORMANCE_CACHE_DIR`, else
`$XDG_CACHE_HOME/reasoning-conformance`), under `envs/<package>-<version>/`:

- a Python library gets a virtual environment made with this interpreter, holding this
  project's runtime dependencies, the adapter's extra with the library pinned to the release,
  and a `.pth` file that puts this copy of the `conformance` package on its path (so the
  adapters run there are the ones of this checkout). The adapter runs in it as a protocol
  server (`python -m conformance.transport.isolated module:attr`), a `cmd:` spec;
- an npm library gets a prefix directory with `npm install <package>@<version>` and a copy of
  the Node adapter script, which then imports that release.

An environment is complete once its `ready` file exists (one process builds it at a time); a
failed build leaves the pip (or npm) error in `failed.txt`, is reported with it, and is not
retried until that file is removed (`--rebuild` does).
"""

from __future__ import annotations

import fcntl
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from conformance._cache import PROJECT, cache_dir, home
from conformance.adapters.adapter import NODE_DIR, Adapter
from conformance.errors import ConformanceError, UsageError

PACKAGE_DIR = Path(__file__).resolve().parent.parent
#: A build that takes longer than this is given up (a resolver lost in old releases).
BUILD_TIMEOUT = 1200.0


@dataclass(frozen=True, slots=True)
class Package:
    """A library published in releases, and how one release is installed."""

    name: str
    #: "pypi" or "npm".
    ecosystem: str
    #: The project's extra holding the library's companions (Python), or "".
    extra: str = ""
    #: The library's requirement with `{version}` for the release, e.g. `x[openai]=={version}`.
    requirement: str = "{name}=={version}"

    def pinned(self, version: str) -> str:
        return self.requirement.format(name=self.name, version=version)


PACKAGES: dict[str, Package] = {
    "litellm": Package("litellm", "pypi", "litellm"),
    "pydantic-ai-slim": Package(
        "pydantic-ai-slim", "pypi", "pydantic-ai", "pydantic-ai-slim[openai]=={version}"
    ),
    "transformers": Package("transformers", "pypi", "transformers"),
    "ai": Package("ai", "npm", requirement="{name}@{version}"),
}
#: The package each adapter's library is published as (ADAPTERS' `library`).
LIBRARY_PACKAGES = {
    "LiteLLM": "litellm",
    "pydantic-ai": "pydantic-ai-slim",
    "transformers": "transformers",
    "Vercel AI SDK (npm ai)": "ai",
}


class EnvBuildError(ConformanceError):
    """An environment that could not be built; the message names the release and the error
    (exit status 2)."""


@dataclass(frozen=True, slots=True)
class Env:
    package: Package
    version: str
    path: Path

    @property
    def python(self) -> Path:
        return self.path / "bin" / "python"


def package(name: str) -> Package:
    if name not in PACKAGES:
        known = ", ".join(PACKAGES)
        raise UsageError(f"--package {name}: no adapter drives it (the packages: {known})")
    return PACKAGES[name]


def package_of(adapter: Adapter) -> Package:
    name = LIBRARY_PACKAGES.get(adapter.library)
    if name is None:
        raise UsageError(f"{adapter.label}: its library ({adapter.library}) has no versioned envs")
    return PACKAGES[name]


def envs_dir() -> Path:
    # With the cache turned off, environments still need a home.
    return (cache_dir() or home()) / "envs"


def env_path(pkg: Package, version: str) -> Path:
    return envs_dir() / f"{pkg.name}-{version}"


def ensure_env(
    pkg: Package, version: str, *, echo: Callable[[str], None], rebuild: bool = False
) -> Env:
    """The environment of `pkg` at `version`, built unless it is cached; EnvBuildError when
    it cannot be built (now or in an earlier try)."""
    env = Env(pkg, version, env_path(pkg, version))
    env.path.parent.mkdir(parents=True, exist_ok=True)
    # One build at a time of each environment, whichever process asks for it.
    with open(env.path.parent / f".{env.path.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _ensure(env, echo=echo, rebuild=rebuild)


def _ensure(env: Env, *, echo: Callable[[str], None], rebuild: bool) -> Env:
    pkg, version = env.package, env.version
    ready, failed = env.path / "ready", env.path / "failed.txt"
    if rebuild and env.path.exists():
        shutil.rmtree(env.path)
    if ready.exists():
        return env
    if failed.exists():
        raise EnvBuildError(failed.read_text("utf-8"))
    if env.path.exists():  # an interrupted build
        shutil.rmtree(env.path)
    env.path.mkdir(parents=True)
    echo(f"building {env.path} ({pkg.pinned(version)})")
    try:
        if pkg.ecosystem == "npm":
            _build_npm(env)
        else:
            _build_python(env)
    except EnvBuildError as error:
        failed.write_text(str(error), "utf-8")
        raise
    ready.write_text(f"{pkg.pinned(version)}\n", "utf-8")
    return env


def python_requirements(pkg: Package, version: str) -> list[str]:
    """What a Python environment installs: this project's runtime dependencies, the extra's
    companions, and the library pinned (in place of the extra's own bound on it)."""
    wanted = []
    for line in metadata.requires(PROJECT) or []:
        requirement, _, marker = (part.strip() for part in line.partition(";"))
        if not marker or (pkg.extra and _extra_of(marker) == pkg.extra):
            name = _NAME.match(requirement)
            # The extra's own bound on the library gives way to the pin.
            if not (marker and name and _normal(name.group(0)) == _normal(pkg.name)):
                wanted.append(requirement)
    return [*wanted, pkg.pinned(version)]


#: The distribution name at the head of a requirement (`pydantic-ai-slim` of
#: `pydantic-ai-slim[openai]>=2.68`).
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_EXTRA = re.compile(r"""^extra\s*==\s*['"]([^'"]+)['"]$""")


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _extra_of(marker: str) -> str | None:
    """The extra a requirement's marker names (`extra == 'litellm'`), None for any other."""
    match = _EXTRA.match(marker)
    return match.group(1) if match else None


def _run(command: list[str], what: str, cwd: Path | None = None) -> None:
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=BUILD_TIMEOUT, cwd=cwd, check=False
        )
    except subprocess.TimeoutExpired:
        raise EnvBuildError(f"{what}: gave up after {BUILD_TIMEOUT:.0f} s") from None
    if done.returncode != 0:
        lines = [line for line in (done.stderr or done.stdout).splitlines() if line.strip()]
        tail = "\n".join(lines[-12:])
        raise EnvBuildError(f"{what}: `{shlex.join(command)}` failed:\n{tail}")


def _build_python(env: Env) -> None:
    what = f"{env.package.name} {env.version}"
    _run([sys.executable, "-m", "venv", str(env.path)], what)
    # Not byte-compiled at install: a large library (LiteLLM) takes minutes to compile, and
    # Python compiles what the adapter imports anyway.
    pip = [str(env.python), "-m", "pip", "install", "--disable-pip-version-check", "-q"]
    pip.append("--no-compile")
    _run([*pip, *python_requirements(env.package, env.version)], what)
    # This copy of the package, without installing it: a directory holding only a link to it.
    source = env.path / "project"
    source.mkdir()
    (source / "conformance").symlink_to(PACKAGE_DIR, target_is_directory=True)
    site = subprocess.run(
        [str(env.python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    (Path(site) / "reasoning_conformance_checkout.pth").write_text(f"{source}\n", "utf-8")


def _build_npm(env: Env) -> None:
    what = f"{env.package.name} {env.version}"
    if shutil.which("npm") is None:
        raise EnvBuildError(f"{what}: npm is not on PATH")
    (env.path / "package.json").write_text('{"private": true, "type": "module"}\n', "utf-8")
    _run(
        ["npm", "install", "--no-audit", "--no-fund", env.package.pinned(env.version)],
        what,
        cwd=env.path,
    )


def versioned_spec(adapter: Adapter, env: Env) -> str:
    """`adapter`'s implementation spec, run in `env`."""
    if adapter.language == "python":
        kind, _, target = adapter.spec.partition(":")
        if kind != "python":
            raise UsageError(f"{adapter.label}: cannot run {adapter.spec!r} in an environment")
        command = [str(env.python), "-m", "conformance.transport.isolated", target]
        return "cmd:" + shlex.join(command)
    words = shlex.split(adapter.spec.removeprefix("cmd:"))
    scripts = [w for w in words if w.startswith(str(NODE_DIR))]
    # The scripts import their shared modules (protocol.mjs) by relative path: all go along.
    for script in sorted(NODE_DIR.glob("*.mjs")):
        copy = env.path / script.name
        if not copy.exists() or copy.read_bytes() != script.read_bytes():
            shutil.copyfile(script, copy)
    words = [str(env.path / Path(w).name) if w in scripts else w for w in words]
    return "cmd:" + shlex.join(words)


def versioned_label(adapter: Adapter, version: str) -> str:
    return f"{adapter.label}@{version}"
