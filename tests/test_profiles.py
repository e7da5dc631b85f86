"""`conformance profiles`: the model-family profiles, as a table and as JSON."""

from __future__ import annotations

import json

from conformance.model.families import FAMILIES
from conformance.model.options import Options
from tests.helpers import cli


def test_the_json_lists_every_family_with_its_options_and_provenance() -> None:
    ran = cli("profiles", "--json")
    assert ran.returncode == 0, ran.stderr
    families = json.loads(ran.stdout)
    assert len(families) >= 18
    assert [family["name"] for family in families] == list(FAMILIES)
    for family in families:
        assert family["summary"]
        assert family["sources"], family["name"]
        for source in family["sources"]:
            assert set(source) == {"engine", "parser", "file"}
            assert all(source.values()), family["name"]
        # What a user copies from the listing is what `--options` reads back.
        named = Options.from_mapping({"profile": family["name"]})
        assert named == Options.from_mapping(family["options"])
        assert named.profile == family["name"]


def test_the_table_names_every_family_with_its_differing_options_and_engines() -> None:
    ran = cli("profiles")
    assert ran.returncode == 0, ran.stderr
    rows = {line.split()[0]: line for line in ran.stdout.splitlines() if not line[0].isspace()}
    assert list(rows) == list(FAMILIES)
    gpt_oss = ran.stdout.split("\ngpt_oss ", 1)[1]
    assert 'options: atomic_delimiters=true framing="harmony"\n' in gpt_oss
    assert "engines: SGLang, vLLM, Dynamo" in gpt_oss
    # A value equal to the default is not shown: kimi keeps the default atomic_delimiters.
    kimi = ran.stdout.split("\nkimi ", 1)[1].split("\nkimi_k2", 1)[0]
    assert "atomic_delimiters" not in kimi
