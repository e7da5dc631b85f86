"""What got worse: the text of the alert (an issue's body, a failed job's summary) when an
implementation's latest run regressed against its run before."""

from __future__ import annotations

from collections.abc import Mapping

from conformance.site.build import PLACEHOLDER_URL


def regressions_markdown(regressions: Mapping[str, int], base_url: str | None) -> str:
    base = (base_url or PLACEHOLDER_URL).rstrip("/")
    lines = [
        "# Conformance verdicts got worse",
        "",
        "The latest run of these implementations regressed against their run before:",
        "",
    ]
    for key, count in sorted(regressions.items()):
        lines.append(f"- `{key}`: {count} results regressed ({base}/impl/{key}.html#history)")
    return "\n".join(lines) + "\n"
