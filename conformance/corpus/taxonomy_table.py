"""The taxonomy as a Markdown table with the cases covering each entry (SPEC.md section 9)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from tabulate import tabulate

from conformance.corpus.check import Taxonomy
from conformance.model.cases import CaseIdentity

START, END = "<!-- taxonomy:start -->", "<!-- taxonomy:end -->"


def render_taxonomy(taxonomy: Taxonomy, cases: Iterable[CaseIdentity]) -> str:
    covering: dict[str, list[str]] = defaultdict(list)
    for case in cases:
        covering[case.taxonomy].append(case.id)
    rows = [
        (
            f"`{entry}`",
            info.get("section", ""),
            info.get("title", ""),
            len(covering.get(entry, [])),
            ", ".join(sorted(covering.get(entry, []))) or "(none)",
        )
        for entry, info in taxonomy.entries.items()
    ]
    headers = ("entry", "§", "behaviour", "count", "cases")
    return tabulate(rows, headers=headers, tablefmt="github") + "\n"


def replace_between_markers(text: str, table: str) -> str | None:
    """`text` with the table between the markers, or None if the markers are missing."""
    start, end = text.find(START), text.find(END)
    if start == -1 or end == -1 or end < start:
        return None
    return text[: start + len(START)] + "\n" + table + text[end:]
