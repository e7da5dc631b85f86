"""The project's own pytest configuration.

- Two tiers: the default run leaves out the tests marked `slow`; `-m slow` runs just those
  (pyproject.toml, README "Tests").
- Hypothesis profiles: `ci` (deterministic, bounded: what `.ci/run` uses), `dev` (the default
  here), `nightly` (long); choose with HYPOTHESIS_PROFILE.
- Under `-n`, the tests of a module whose setup is costly share one worker (ONE_WORKER), and
  the tests of other modules that import the adapters run on the adapters' (WITH_THE_ADAPTERS).
- What exists when a test starts (modules, the corpus, fixtures) is left out of the garbage
  collections the test sets off (`gc.freeze`), the adapters' libraries among it.
- Where PYTHONDONTWRITEBYTECODE is set, the processes the suite starts share a bytecode cache
  outside the checkout (PYCACHE) rather than each compiling the package again.
- The conformance plugin is active when the suite runs from a checkout, installed or not.
- Where the C scan is not built, the suite runs as on the pure path (CONFORMANCE_PURE_PYTHON),
  as `.ci/run`'s second default tier does: rather than every command opening with the note
  of a missing scan (tests/test_scan_status.py tests that note).
"""

from __future__ import annotations

import gc
import importlib.util
import os
import sys
import tempfile
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import pytest

#: Where the test processes and the processes they start keep their bytecode when
#: PYTHONDONTWRITEBYTECODE is set: a directory of the system's temporary directory, outside
#: the checkout, kept from one run to the next as __pycache__ directories would be. Hundreds
#: of processes (the xdist workers, `conformance` commands, `cmd:` implementations, the pytest
#: runs of the plugin) would otherwise each compile the same modules again, and each pytest
#: process rewrite the asserts of every test module, of Hypothesis and of this package again.
PYCACHE = Path(tempfile.gettempdir()) / f"conformance-tests-pycache-{getattr(os, 'getuid', str)()}"
if os.environ.get("PYTHONDONTWRITEBYTECODE") and not os.environ.get("PYTHONPYCACHEPREFIX"):
    os.environ["PYTHONPYCACHEPREFIX"] = str(PYCACHE)
    del os.environ["PYTHONDONTWRITEBYTECODE"]
    # This process too, for what it is about to import: Hypothesis (next), the test modules.
    sys.pycache_prefix, sys.dont_write_bytecode = str(PYCACHE), False

from hypothesis import HealthCheck, settings  # noqa: E402

settings.register_profile(
    "ci",
    max_examples=200,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", max_examples=100, deadline=None)
settings.register_profile("nightly", max_examples=20_000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))

if importlib.util.find_spec("conformance.model._scan") is None:
    os.environ.setdefault("CONFORMANCE_PURE_PYTHON", "1")

pytest_plugins = ["pytester"]
if not entry_points(group="pytest11", name="conformance"):
    pytest_plugins.append("conformance.pytest_plugin")


#: Test modules whose tests all run on one xdist worker, because their module-scoped setup is
#: costly and would otherwise be paid by every worker: importing the adapters' libraries
#: (torch among them), building the Rust example, running a badly broken normalizer over the
#: whole corpus.
ONE_WORKER = ("tests/test_adapters.py", "tests/test_examples.py", "tests/test_reports_triage.py")

#: Tests of other modules that import the adapters' modules, and so their libraries (vLLM
#: alone takes seconds): they run on the worker of tests/test_adapters.py, which has imported
#: them already, rather than importing them a second time on the other worker.
#: The slow tier's whole-corpus run of each adapter: minutes each, against seconds to import
#: the libraries, so they spread over the workers like other tests.
SPREAD = "tests/test_adapters.py::test_adapter_behaves_as_its_expectation_file_says"
WITH_THE_ADAPTERS = (
    "tests/test_errors.py::test_every_exception_class_is_an_error_of_the_tree[conformance.adapters",
    "tests/test_errors.py::test_the_documentation_lists_the_tree_as_the_code_has_it",
)


@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """`--dist load` (xdist's default), except that each module of ONE_WORKER is one unit of
    work (with the tests WITH_THE_ADAPTERS in that of tests/test_adapters.py, and without the
    adapters' whole-corpus runs, SPREAD). `--dist
    loadgroup` with `xdist_group` marks would say the same, but it groups by a suffix xdist
    adds to node IDs, which pytest 9.2 no longer takes (pytest-xdist#1386)."""
    if config.getvalue("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class OneWorkerPerCostlyModule(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            if nodeid.startswith(SPREAD):
                return nodeid
            if nodeid.startswith(WITH_THE_ADAPTERS):
                return "tests/test_adapters.py"
            module = nodeid.split("::", 1)[0]
            return module if module in ONE_WORKER else nodeid

    return OneWorkerPerCostlyModule(config, log)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item: pytest.Item) -> None:
    """What exists when a test starts (the modules, the corpus, its fixtures' values) is left
    out of the garbage collections the test sets off, which would otherwise scan it all
    again, thousands of times over a run. (A run freezes what exists while it runs,
    engine/runner.py, unless something is frozen already, as it is here.)"""
    gc.freeze()


def pytest_unconfigure(config: pytest.Config) -> None:
    """What was frozen is collected at exit as usual (extension modules check that their
    objects were: nanobind's, imported by the adapters' libraries, warns otherwise)."""
    gc.unfreeze()
