"""The rendering contract (SPEC.md section 12): reasoning rendered into a visible text stream.

OpenAI- and Anthropic-compatible headends have no thinking channel on the wire, so they write
thinking into the visible stream as a Markdown section. A renderer receives events (`thinking`,
`progress`, `text`, `turn_end`) and returns, for each event as it arrives, the text it writes.
The reference is the seed's boolean state machine (seeds/003): one flag, `open`.

- thinking while closed: write OPEN (`"\\n\\n---\\n"`) first, then the text; the flag is set.
- progress or text while open: write CLOSE (`"\\n---\\n\\n"`) first, then the text.
- turn_end: write CLOSE if open; the next turn starts closed.

Two details the seed leaves open, decided here (SPEC.md 12.6 and 12.7):

- An event with empty text writes nothing and changes nothing: an empty thinking delta does
  not open a section, an empty text or progress delta does not close one. The seed opens the
  section "whenever we emit thinking"; an empty delta emits no thinking, and a section opened
  for it would show the reader a bare pair of rules around nothing.
- Thinking at the end of the stream (no turn_end) leaves the section open: without buffering
  the renderer cannot know that no more thinking follows, and the stream's end is no event.

Checks: `render` compares the outputs with the case's exactly; `roundtrip` splits the joined
outputs with the reference normalizer under the section grammar (OPEN, CLOSE) and compares the
channels with the thinking and the visible (progress and text) texts of the events.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from conformance.model.judge import difference
from conformance.model.results import Verdict
from conformance.reference import normalize_whole

if TYPE_CHECKING:  # Hypothesis is imported only for fuzzing: it is slow to import
    from hypothesis.strategies import SearchStrategy

__all__ = [
    "CHECKS",
    "CLOSE",
    "EVENT_TYPES",
    "METHOD",
    "NAME",
    "OPEN",
    "PROPERTIES",
    "SCHEMA",
    "SECTION_OPTIONS",
    "Renderer",
    "events_of",
    "expected_for",
    "guess_taxonomy",
    "inputs",
    "judge",
    "original_channels",
    "reference",
    "render_events",
    "requests",
    "roundtrips",
    "skip_reason",
    "split_rendered",
]

NAME = "render"
SCHEMA = "render-case-file.schema.json"
CHECKS = ("render", "roundtrip")
PROPERTIES = (NAME,)
METHOD = "render"

OPEN = "\n\n---\n"
CLOSE = "\n---\n\n"
EVENT_TYPES = ("thinking", "progress", "text", "turn_end")
#: The normalizer options that read a rendered stream back: the section as a delimiter pair.
SECTION_OPTIONS: dict[str, Any] = {"delimiters": [{"open": OPEN, "close": CLOSE}]}

_ROUNDTRIP_SKIP = (
    "the section grammar cannot carry these texts back: splitting the reference's own "
    "rendering does not give them back (thinking that ends in a line break runs into the "
    "close, or a text holds a delimiter), so only the exact-output check applies"
)


class Renderer:
    """The seed's boolean state machine: `render` one event, get the text to write."""

    __slots__ = ("open",)

    def __init__(self) -> None:
        self.open = False

    def render(self, kind: str, text: str) -> str:
        if kind == "turn_end":
            return self._close()
        if not text:
            return ""
        if kind == "thinking":
            if self.open:
                return text
            self.open = True
            return OPEN + text
        return self._close() + text

    def _close(self) -> str:
        if not self.open:
            return ""
        self.open = False
        return CLOSE


def events_of(payload: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The payload's events as (type, text) pairs; ValueError naming the first bad one."""
    events = payload.get("events")
    if not isinstance(events, list):
        raise ValueError(f'a render request needs "events": a list, not {events!r}')
    pairs = []
    for index, event in enumerate(events):
        if not isinstance(event, Mapping):
            raise ValueError(f"event {index} must be an object, not {event!r}")
        kind, text = event.get("type"), event.get("text")
        if kind not in EVENT_TYPES:
            raise ValueError(f"event {index} has type {kind!r}; the types are {EVENT_TYPES}")
        if not isinstance(text, str):
            raise ValueError(f'event {index} needs "text": a string, not {text!r}')
        if kind == "turn_end" and text:
            raise ValueError(f'event {index}: a turn_end carries no text (use "")')
        pairs.append((kind, text))
    return pairs


def render_events(events: Sequence[tuple[str, str]]) -> list[str]:
    renderer = Renderer()
    return [renderer.render(kind, text) for kind, text in events]


def reference(payload: Mapping[str, Any]) -> dict[str, Any]:
    """The reference renderer: one output per event."""
    return {"outputs": render_events(events_of(payload))}


def split_rendered(text: str) -> dict[str, str]:
    """A rendered stream read back by the reference normalizer: sections are thinking."""
    split = normalize_whole(text, None, SECTION_OPTIONS)
    return {"assistant": split["assistant"], "thinking": split["thinking"]}


def original_channels(events: Sequence[tuple[str, str]]) -> dict[str, str]:
    """What a rendered stream carries: the visible (progress and text) and thinking texts."""
    visible = "".join(text for kind, text in events if kind in ("progress", "text"))
    thinking = "".join(text for kind, text in events if kind == "thinking")
    return {"assistant": visible, "thinking": thinking}


def roundtrips(events: Sequence[tuple[str, str]]) -> bool:
    """Whether the section grammar can carry these events' texts back at all."""
    rendered = "".join(render_events(events))
    return split_rendered(rendered) == original_channels(events)


def requests(case_input: Mapping[str, Any], check: str) -> list[dict[str, Any]]:
    """Both checks send the case's events once; roundtrip only where the grammar can split."""
    payload = {"events": [dict(event) for event in case_input["events"]]}
    if check == "render":
        return [payload]
    if check == "roundtrip":
        return [payload] if roundtrips(events_of(payload)) else []
    raise ValueError(f"the render contract has no check {check!r}; its checks are {CHECKS}")


def skip_reason(case_input: Mapping[str, Any], check: str) -> str:
    """Why `requests` sent nothing for this case and check."""
    return _ROUNDTRIP_SKIP if check == "roundtrip" else ""


def judge(
    case_input: Mapping[str, Any],
    expected: Mapping[str, Any],
    check: str,
    replies: Sequence[Mapping[str, Any]],
) -> tuple[Verdict, str, dict[str, Any] | None]:
    events = events_of(case_input)
    if len(replies) != 1:
        return Verdict.FAIL, f"expected one reply to the one request, got {len(replies)}", None
    reply = dict(replies[0])
    outputs = reply.get("outputs")
    problem = _malformed(outputs, len(events))
    if problem:
        return Verdict.FAIL, problem, reply
    assert isinstance(outputs, list)
    if check == "render":
        return _judge_render(events, expected["outputs"], outputs)
    if check == "roundtrip":
        return _judge_roundtrip(events, outputs)
    raise ValueError(f"the render contract has no check {check!r}; its checks are {CHECKS}")


def _malformed(outputs: Any, events: int) -> str:
    if not isinstance(outputs, list):
        return f'the reply needs "outputs": a list of strings, got {outputs!r}'
    if len(outputs) != events:
        return f"expected {events} outputs (one per event), got {len(outputs)}"
    for index, output in enumerate(outputs):
        if not isinstance(output, str):
            return f"output {index} is {type(output).__name__} {output!r}, not a string"
    return ""


def _judge_render(
    events: Sequence[tuple[str, str]], want: Sequence[str], got: list[str]
) -> tuple[Verdict, str, dict[str, Any]]:
    actual = {"outputs": got}
    for index, (expected_output, output) in enumerate(zip(want, got, strict=True)):
        if expected_output != output:
            kind, text = events[index]
            return (
                Verdict.FAIL,
                f"event {index} ({kind} {text!r}) rendered {output!r}; "
                f"expected {expected_output!r}",
                actual,
            )
    return Verdict.PASS, "", actual


def _judge_roundtrip(
    events: Sequence[tuple[str, str]], got: list[str]
) -> tuple[Verdict, str, dict[str, Any]]:
    split = split_rendered("".join(got))
    actual = {"outputs": got, "split": split}
    want = original_channels(events)
    differing = [name for name in ("thinking", "assistant") if split[name] != want[name]]
    if not differing:
        return Verdict.PASS, "", actual
    reason = "; ".join(difference(name, want[name], split[name]) for name in differing)
    return Verdict.FAIL, f"the rendered stream splits back differently: {reason}", actual


def expected_for(case_input: Mapping[str, Any]) -> dict[str, Any]:
    """A case's expected output for an input, from the reference (for proposed cases)."""
    return reference(case_input)


def guess_taxonomy(case_input: Mapping[str, Any]) -> str:
    """A first guess at a proposed case's taxonomy entry, for the reviewer to confirm."""
    kinds = [kind for kind, text in events_of(case_input) if text or kind == "turn_end"]
    if "turn_end" in kinds:
        return "RENDER.turns"
    if "thinking" not in kinds:
        return "RENDER.plain"
    first = kinds.index("thinking")
    if any(kind != "thinking" for kind in kinds[first:]):
        return "RENDER.reopen" if kinds[first:].count("thinking") > 1 else "RENDER.close"
    return "RENDER.end-open"


def inputs() -> SearchStrategy[dict[str, Any]]:
    from conformance import strategies

    return strategies.render_events()
