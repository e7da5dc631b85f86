"""The `conformance run` command line that runs one failing case and check again: the same
implementation under the same label, the same options, that case ID and that check alone.

    rerun_command(implementation.info, result)
    # "conformance run --impl python:my.mod:Norm --id K7QF --check stream"
"""

from __future__ import annotations

import json
import shlex

from conformance.contracts import all_checks
from conformance.model.results import CaseResult, ImplementationInfo

from ._common import option_differences
from ._fuzz_replay import impl_argument


def rerun_command(info: ImplementationInfo, result: CaseResult) -> str:
    """One line for a shell (words quoted as `shlex` quotes them)."""
    words = ["conformance", "run", "--impl", impl_argument(info)]
    differences = option_differences(info.options)
    if differences:
        words += ["--options", json.dumps(differences, ensure_ascii=False)]
    words += ["--id", result.case]
    # The growth check and the like are not selected by --check: the case alone reruns them.
    # A case's check is rerun alone, without timing the implementation's growth as well.
    if result.check in all_checks():
        words += ["--check", result.check, "--no-growth"]
    return shlex.join(words)
