"""AutoGen: `OpenAIChatCompletionClient` with an R1-family model, streamed and whole, through
real HTTP.

    conformance run --impl autogen-r1=python:conformance.adapters.autogen:R1

`OpenAIChatCompletionClient` (autogen_ext.models.openai) is the model client AutoGen's agents
run on against any OpenAI-compatible server. With a `model_info` whose family is
`ModelFamily.R1` it splits reasoning out of the content with `parse_r1_content`
(`autogen_ext/models/_utils/parse_r1_content.py`): the text between the first `<think>` and
the first `</think>` after it, stripped, is the thought, and what follows the `</think>`,
stripped, the content. A native `reasoning_content` field is taken as the thought instead,
and then the content is not searched for tags. Whole messages go through `create`, streams
through `create_stream`; the client talks to a loopback server (`event_loop_http`) that
sends the case's chunks as server-sent events, one per `feed`.

The channels are `CreateResult.content` (assistant) and `CreateResult.thought` (thinking),
the only split AutoGen makes. `create_stream` yields plain strings while the response
streams and one `CreateResult` at its end. The strings carry no channel: each is a content
delta as the server sent it (tags and all), or native reasoning wrapped as `<think>` ...
`</think>` text; AutoGen's `AssistantAgent` passes them on as
`ModelClientStreamingChunkEvent` previews and keeps the `CreateResult` as the message ("chunks
are only for UI purposes", its maintainer's review of PR #5941). So the strings are not a
split, and the stream is split when it ends, as AutoGen splits it: each
`feed` returns nothing (what the client yielded for that event is a preview) and `finish`
returns the final `CreateResult`'s content and thought. Holdback is therefore the whole
stream until its end.

Checked against the installed autogen-ext (`autogen_ext/models/openai/_openai_client.py`,
`create` and `create_stream`).
"""

from __future__ import annotations

import warnings
from collections.abc import AsyncIterator
from typing import Any

from autogen_core.models import CreateResult, ModelFamily, ModelInfo, UserMessage
from autogen_ext.models.openai import OpenAIChatCompletionClient

from ..interface import Chunk, Delta, implementation
from . import wire_events
from .common import delta, installed_version
from .event_loop_http import Streamed, local

MESSAGES = [UserMessage(content="hi", source="user")]

#: An R1-family model as AutoGen's users declare a local DeepSeek-R1 (its documentation's
#: example), which is what turns `parse_r1_content` on.
MODEL_INFO = ModelInfo(
    vision=False,
    function_calling=False,
    json_output=False,
    family=ModelFamily.R1,
    structured_output=False,
)

# The client warns when a response has no complete think block or no content at all; what it
# returns is the same, and a warning per check would flood the harness's standard error.
warnings.filterwarnings("ignore", message="No text content or tool calls are available")
warnings.filterwarnings("ignore", message="Could not find <think>")
warnings.filterwarnings("ignore", message="Found </think> before <think>")


def _client(url: str) -> OpenAIChatCompletionClient:
    return OpenAIChatCompletionClient(
        model=wire_events.MODEL,
        base_url=f"{url}/v1",
        api_key="-",
        max_retries=0,
        model_info=MODEL_INFO,
    )


def _result(result: CreateResult) -> Delta:
    content = result.content if isinstance(result.content, str) else ""
    return delta(content, result.thought)


def _final(yielded: list[Any]) -> Delta:
    for item in yielded:
        if isinstance(item, CreateResult):
            return _result(item)
    return delta()


@implementation(
    name="autogen (OpenAIChatCompletionClient, R1 family)",
    version=installed_version("autogen-ext"),
    options={"delimiters": "think_only", "sections": "one"},
)
class R1:
    """One `create_stream` of AutoGen's OpenAI client with an R1-family model."""

    def __init__(self) -> None:
        self._client: OpenAIChatCompletionClient = local().client("autogen-r1", _client)
        self._stream: Streamed[Any] = Streamed(wire_events.SSE, self._start)

    def _start(self) -> AsyncIterator[Any]:
        return self._client.create_stream(MESSAGES)

    def feed(self, chunk: Chunk) -> Delta:
        # The strings yielded meanwhile are previews without a channel (module docstring).
        return _final(self._stream.send(wire_events.openai_event(chunk)))

    def finish(self) -> Delta:
        return _final(self._stream.end(wire_events.openai_end()))

    def whole(self, content: str | None, reasoning: str | None) -> Delta:
        client = self._client
        result = local().whole(
            wire_events.JSON,
            wire_events.openai_whole(content, reasoning),
            lambda: client.create(MESSAGES),
        )
        return _result(result)
