"""`conformance fingerprint`'s output: a table of the options followed, the probes of each
option not followed as declared, and the options to declare (text, Markdown or JSON)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from tabulate import tabulate

from conformance.model.options import Options
from conformance.tools.fingerprint import Fingerprint
from conformance.tools.fingerprint_probes import Stream
from conformance.tools.fingerprint_results import AxisResult, ProbeResult, format_value, items_of


def _show_chunks(chunks: Stream) -> str:
    """Chunks in the notation of SPEC.md 1.5: a string for a content-only chunk, else an
    object without its null fields."""
    items = [
        chunk.content
        if chunk.reasoning is None
        else {k: v for k, v in chunk.to_json().items() if v is not None}
        for chunk in chunks
    ]
    return json.dumps(items, ensure_ascii=False)


def _show(channels: Mapping[str, str] | None) -> str:
    if channels is None:
        return "-"
    return f"assistant {channels['assistant']!r}, thinking {channels['thinking']!r}"


def _evidence(axis: AxisResult, markdown: bool = False) -> str:
    """One line per probe: what its output agreed with (a `<br>`-joined cell in Markdown)."""
    # No probe: an option harmony framing has its own way of doing (SPEC.md 5.8).
    lines = [] if axis.probes else ["(harmony framing: not an option)"]
    for probe in axis.probes:
        if probe.problem is not None:
            verdict = probe.problem
        elif not probe.discriminating:
            verdict = "(same under every value)"
        elif not probe.matches:
            verdict = "no value"
        elif axis.option in ("delimiters", "tool_markers"):
            verdict = _recognition(probe)
        else:
            verdict = ", ".join(format_value(value) for value in probe.matches)
        name = f"`{probe.name}`" if markdown else probe.name
        lines.append(f"{name}: {verdict}")
    if markdown:
        return "<br>".join(line.replace("|", "\\|") for line in lines)
    return "\n".join(lines)


def _recognition(probe: ProbeResult) -> str:
    """A delimiter probe's verdict in words: was its pair recognised?"""
    pair = probe.about
    values = [value for value, _ in probe.expected]
    having = [value in probe.matches for value in values if pair in items_of(value)]
    lacking = [value in probe.matches for value in values if pair not in items_of(value)]
    if any(having) and not any(lacking):
        return "recognised"
    if any(lacking) and not any(having):
        return "not recognised"
    return "unclear"


def render_fingerprint(fp: Fingerprint, format_: str = "text") -> str:
    """The fingerprint as text (a table, the probes of each option that is not as declared,
    the options to declare), as Markdown (the same, for a pull request), or as JSON."""
    if format_ == "json":
        return json.dumps(fp.to_json(), ensure_ascii=False, indent=1) + "\n"
    markdown = format_ == "markdown"

    def value(text: str) -> str:
        return f"`{text}`" if markdown else text

    info = fp.info
    rows = [
        [
            axis.option,
            value(format_value(_from_json(axis.declared))),
            value(format_value(axis.value)),
            "yes" if axis.agrees else "NO",
            _evidence(axis, markdown),
        ]
        for axis in fp.axes
    ]
    table = tabulate(
        rows,
        headers=["option", "declared", "follows", "agrees", "probes"],
        tablefmt="github" if markdown else "simple",
    )
    details = _details(fp)
    verdict = []
    if not fp.consistent:
        if not all(axis.found for axis in fp.axes):
            verdict.append("some options follow no single value: no declaration makes them conform")
        elif not Options.from_mapping(info.options).differences():
            verdict.append(
                "the implementation declares no options beyond the defaults, and does not "
                "follow them: declare the options above"
            )
        else:
            verdict.append("the implementation does not do what it declares")
    declare = f"options to declare: {json.dumps(fp.declared_options(), ensure_ascii=False)}"
    families = _families(fp)
    head = (
        f"{info.label}: {info.name} {info.version} ({info.language}), {fp.requests} probes "
        f"in {fp.seconds:.2f} s"
    )
    if markdown:
        fenced = ["```text", *details, *([""] if details else []), families, declare, "```"]
        out = [head, "", table, "", *fenced, *([""] if verdict else []), *verdict]
    else:
        out = [head, "", table, *(["", *details] if details else []), "", families, declare]
        out += verdict
    return "\n".join(out) + "\n"


def _families(fp: Fingerprint) -> str:
    """The model-family profiles (SPEC.md 5.9) the values found are, or the closest ones and
    where they differ."""
    matches, exact = fp.families()
    if exact:
        names = ", ".join(match.name for match in matches)
        return f"model family profiles with these values: {names}"
    closest = "; ".join(
        f"{match.name} ("
        + ", ".join(
            f"{option} {format_value(found)}, theirs {format_value(theirs)}"
            for option, (found, theirs) in match.differences.items()
        )
        + ")"
        for match in matches
    )
    return f"no model family profile has these values; the closest: {closest}"


def _details(fp: Fingerprint) -> list[str]:
    """For each option not followed as declared: every probe, what the implementation gave,
    and what the reference gives under each value."""
    out: list[str] = []
    for axis in fp.axes:
        if axis.agrees:
            continue
        if out:
            out.append("")
        out.append(f"{axis.option}: follows {format_value(axis.value)}; the probes:")
        for probe in axis.probes:
            out.append(f"  {probe.name}: {_show_chunks(probe.chunks)}")
            out.append(f"    got               {probe.problem or _show(probe.actual)}")
            for candidate, outputs in probe.expected:
                mark = "  <- agrees" if candidate in probe.matches else ""
                shown = " or ".join(_show(channels) for channels in outputs)
                out.append(f"    {format_value(candidate):<17} {shown}{mark}")
    return out


def _from_json(value: Any) -> Any:
    if isinstance(value, list):
        # Tool markers are strings, delimiter pairs {open, close}.
        return tuple(
            item if isinstance(item, str) else (item["open"], item["close"]) for item in value
        )
    return value
