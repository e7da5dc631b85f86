"""The adapters of vLLM's and SGLang's model families (conformance/adapters/engine_families.py):
each declares the family profile it is, and drives the parser the engine names for that family
(conformance/model/families.py), as the installed engine registers it."""

from __future__ import annotations

import importlib.util
import re

import pytest

from conformance.adapters import ADAPTERS
from conformance.adapters.engine_families import LEFT_OUT, VARIANTS, Variant
from conformance.model.families import FAMILIES, Source
from conformance.model.options import Options

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning", "ignore::DeprecationWarning")


def source(variant: Variant) -> Source:
    [found] = [s for s in FAMILIES[variant.family].sources if s.engine == variant.engine]
    return found


def test_every_variant_declares_an_existing_profile_and_is_an_adapter() -> None:
    by_label = {a.label: a for a in ADAPTERS}
    for variant in VARIANTS:
        assert variant.family in FAMILIES
        assert Options.from_mapping(variant.options).profile == variant.family
        assert by_label[variant.label].spec.endswith(f":FAMILY.{variant.family}")
    assert len({v.label for v in VARIANTS}) == len(VARIANTS)


def test_every_family_an_engine_names_is_a_variant_or_left_out_with_a_reason() -> None:
    have = {(v.engine, v.family) for v in VARIANTS}
    for family in FAMILIES.values():
        for named in family.sources:
            if named.engine in ("vLLM", "SGLang"):
                key = (named.engine, family.name)
                assert key in have or LEFT_OUT.get(key), key
    assert not have & set(LEFT_OUT)


def _vllm_variants() -> list[Variant]:
    return [v for v in VARIANTS if v.engine == "vLLM"]


def _sglang_variants() -> list[Variant]:
    return [v for v in VARIANTS if v.engine == "SGLang"]


# Each imports its engine (vLLM: seconds, torch and all): tests/tiers.py.
@pytest.mark.slow
@pytest.mark.parametrize("variant", _vllm_variants(), ids=lambda v: v.label)
def test_a_vllm_variant_drives_the_parser_its_family_names(variant: Variant) -> None:
    if importlib.util.find_spec("vllm") is None:
        pytest.skip("vLLM is not installed")
    from vllm.reasoning import _REASONING_PARSERS_TO_REGISTER

    named = source(variant)
    assert named.parser == variant.parser
    module, _ = _REASONING_PARSERS_TO_REGISTER[variant.parser]
    assert named.file == f"vllm/reasoning/{module}.py"


@pytest.mark.slow
@pytest.mark.parametrize("variant", _sglang_variants(), ids=lambda v: v.label)
def test_an_sglang_variant_drives_the_detector_its_family_names(variant: Variant) -> None:
    if importlib.util.find_spec("sglang") is None:
        pytest.skip("SGLang is not installed")
    from conformance.adapters.sglang import ReasoningParser

    named = source(variant)
    detector = ReasoningParser.DetectorMap[variant.parser]
    # The family names the detector class, with a note where the model type picks a setting.
    match = re.match(r"\w+", named.parser)
    assert match is not None and match.group() == detector.__name__
