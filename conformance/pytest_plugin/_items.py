"""The conformance tests: one suite per implementation, one item per (case, check) and one
per fuzzing property."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from conformance.errors import Failure

from ._state import (
    FUZZ,
    FUZZ_PROPERTY,
    RESULT_PROPERTY,
    SIGNATURE_PROPERTY,
    STATE,
    State,
    marker,
)

if TYPE_CHECKING:
    from conformance.model.cases import CaseIdentity
    from conformance.model.results import CaseResult


class ConformanceSuite(pytest.Collector):
    """One implementation's tests: (case, check) items, then its fuzzing properties."""

    def collect(self) -> list[pytest.Item]:
        from conformance.contracts import contract_checks
        from conformance.engine.plans import profiled
        from conformance.model.options import Options

        state: State = self.config.stash[STATE]
        label = self.name[len("conformance[") : -1]
        options = Options.from_mapping(state.connection(label).info.options)
        items: list[pytest.Item] = []
        for case in profiled(state.cases, options):
            own = contract_checks()[case.contract]
            for check in (c for c in state.checks if c in own):
                item = ConformanceItem.from_parent(
                    self,
                    name=f"{case.id}-{case.slug}[{check}]",
                    label=label,
                    case=case,
                    check=check,
                )
                item.add_marker("conformance")
                item.add_marker(marker(case.category))
                items.append(item)
        if self.config.getoption(FUZZ):
            from conformance.contracts import fuzz_properties

            for name in fuzz_properties():
                fuzz = FuzzItem.from_parent(
                    self, name=f"fuzz[{name}]", label=label, property_name=name
                )
                fuzz.add_marker("conformance")
                fuzz.add_marker("conformance_fuzz")
                items.append(fuzz)
        return items


class ConformanceFailure(Failure):
    """A case's check did not pass: the test fails (exit status 1, pytest's too)."""

    def __init__(self, result: CaseResult) -> None:
        super().__init__(result.reason)
        self.result = result


class ConformanceItem(pytest.Item):
    def __init__(self, *, label: str, case: CaseIdentity, check: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.label = label
        self.case = case
        self.check = check

    def runtest(self) -> None:
        from conformance.engine.judging import judge
        from conformance.engine.plans import plan_case
        from conformance.model.options import Options
        from conformance.model.results import Verdict

        state: State = self.config.stash[STATE]
        connection = state.connection(self.label)
        options = Options.from_mapping(connection.info.options)
        plan = plan_case(self.case, options, [self.check])[0]
        result = judge(plan, state.send(self.label, plan.requests), options)
        result = state.expected_failures(self.label).apply(result)
        _record(self, RESULT_PROPERTY, connection.info, result)
        if not result.verdict.ok and result.verdict != Verdict.XFAIL:
            from ._failures import signature_key

            key = signature_key(connection.info, result)
            self.user_properties.append((SIGNATURE_PROPERTY, key))
        if result.verdict == Verdict.XFAIL:
            pytest.xfail(result.reason)
        elif not result.verdict.ok:
            raise ConformanceFailure(result)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, ConformanceFailure):
            from ._failures import failure_text

            state: State = self.config.stash[STATE]
            info = state.connection(self.label).info
            return failure_text(info, excinfo.value.result, self.case.where)
        if isinstance(excinfo.value, pytest.xfail.Exception):
            # An expected failure: its reason is all there is to say. pytest's traceback of
            # the plugin's frames would parse the source of each (a second per item).
            return str(excinfo.value.msg)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int, str]:
        return (
            self.case.file,
            self.case.line - 1,
            f"{self.case.id} {self.case.title} [{self.check}]",
        )


def _record(item: pytest.Item, name: str, info: Any, result: Any) -> None:
    """Hand a result to the reports (through the test report, so xdist carries it), and
    settle the verdicts pytest has its own words for: NON_STRICT passes, SKIP skips."""
    from conformance.model.results import Verdict

    record = {"label": info.label, "info": info.to_json(), "result": result.to_json()}
    item.user_properties.append((name, json.dumps(record)))
    if result.verdict == Verdict.NON_STRICT:
        item.user_properties.append(("non_strict", result.reason))
    elif result.verdict == Verdict.SKIP:
        pytest.skip(result.reason)


class FuzzItem(pytest.Item):
    """One fuzzing property against one implementation, under the Hypothesis profile."""

    def __init__(self, *, label: str, property_name: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.label = label
        self.property_name = property_name

    def runtest(self) -> None:
        import random

        from hypothesis import settings

        from conformance.fuzz.properties import Target, run_property
        from conformance.model.options import Options

        state: State = self.config.stash[STATE]
        connection = state.connection(self.label)
        profile = settings.default
        assert profile is not None  # Hypothesis always has a current profile
        # A deterministic profile (`ci`) fixes the seed; otherwise each run explores anew.
        seed = 0 if profile.derandomize else random.randrange(2**32)
        result = run_property(
            self.property_name,
            Target(connection, Options.from_mapping(connection.info.options)),
            max_examples=profile.max_examples,
            seed=seed,
            database=profile.database,
            key=f"conformance/{self.label}/{self.property_name}".encode(),
        )
        _record(self, FUZZ_PROPERTY, connection.info, result)
        if not result.verdict.ok:
            raise FuzzFailure(result, connection.info, profile.max_examples)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if not isinstance(excinfo.value, FuzzFailure):
            return str(super().repr_failure(excinfo))
        result = excinfo.value.result
        lines = [
            f"{result.verdict.value}: property {result.property} after {result.examples} "
            f"examples (seed {result.seed})",
            f"reason: {result.reason}",
        ]
        example = result.counterexample or {}
        if "chunks" in example:
            from conformance.reports._example import cut
            from conformance.reports._plain import chunk_lines

            lines.append(f"shrunk input: {cut(''.join(chunk_lines(example['chunks'])), 1000)}")
        for key in ("expected", "actual"):
            if key in example:
                lines.append(f"{key}: {json.dumps(example[key], ensure_ascii=False)}")
        from conformance.reports._fuzz_replay import fuzz_command

        failure = excinfo.value
        # The profile's budget matters: the same seed with another count explores otherwise.
        replay = fuzz_command(
            failure.info, result.seed, prop=result.property, max_examples=failure.max_examples
        )
        lines.append(f"replay: {replay}")
        return "\n".join(lines)

    def reportinfo(self) -> tuple[str, int, str]:
        return "conformance-fuzz", 0, f"{self.label}: fuzz {self.property_name}"


class FuzzFailure(Failure):
    """A fuzz property found a counterexample: the test fails (exit status 1, pytest's too)."""

    def __init__(self, result: Any, info: Any, max_examples: int) -> None:
        super().__init__(result.reason)
        self.result = result
        self.info = info
        self.max_examples = max_examples
