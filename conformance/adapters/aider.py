"""aider: what `aider/reasoning_tags.py` keeps of a reply as the answer.

    conformance run --impl aider=python:conformance.adapters.aider:ReasoningTag

aider does not split a stream into channels: while a reply streams it shows it with
`replace_reasoning_tags` applied to each delta (the tags become THINKING / ANSWER rules on
the terminal, the reasoning stays on screen), and once the reply is complete
(`Coder.send_message`'s `finally`) `Coder.remove_reasoning_content` calls
`remove_reasoning_content(partial_response_content, reasoning_tag_name)`, whose result is the
answer aider keeps in the chat history and applies edits from. This adapter drives that
split with the tag aider's model settings give DeepSeek R1 and QwQ through OpenAI-compatible
providers (`reasoning_tag: think`), so a stream is split when it ends, as aider splits it.
A native reasoning field is never part of `partial_response_content` in aider's
non-streaming path (`show_send_output` only prints it), so it is the thinking shown here;
the body of a tag block is removed from the answer and kept nowhere.

aider-chat pins its whole dependency tree (litellm, numpy, ...) to versions this project's
environment cannot take, and `aider.coders` needs them; `aider.reasoning_tags` needs only
the standard library, so the package goes in with `pip install --no-deps aider-chat` and
only that module is imported.
"""

from __future__ import annotations

from aider.reasoning_tags import remove_reasoning_content

from ..interface import from_function, implementation
from .common import installed_version

#: `reasoning_tag` in aider's model settings for models that write their reasoning in tags.
TAG = "think"


@implementation(
    name="aider (reasoning_tag: think)",
    version=installed_version("aider-chat"),
    options={},
)
def _split(content: str, reasoning: str | None) -> tuple[str, str]:
    return remove_reasoning_content(content, TAG), reasoning or ""


#: A fresh splitter per stream: the reply is split once it is complete.
ReasoningTag = from_function(_split)
