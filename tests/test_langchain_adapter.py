"""The LangChain adapters (conformance/adapters/langchain.py) beyond what tests/test_adapters.py
checks for every adapter: a chunk's delta is what the client yields for that chunk's event,
message chunks are read as LangChain's users read them, and a client that fails or yields
nothing raises a clear error instead of hanging the harness."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from types import ModuleType

import pytest


# LangChain takes seconds to import: imported by the tests that use it, which are in the
# slow tier, rather than when every worker collects this module.
@pytest.fixture(scope="module")
def lc() -> ModuleType:
    return pytest.importorskip("conformance.adapters.langchain")


@pytest.fixture(scope="module")
def messages() -> ModuleType:
    return pytest.importorskip("langchain_core.messages")


@pytest.mark.slow
def test_each_chunk_is_answered_before_the_next_is_sent(lc: ModuleType) -> None:
    normalizer = lc.DeepSeek()
    assert normalizer.feed({"content": None, "reasoning": "plan"}) == {
        "assistant": "",
        "thinking": "plan",
    }
    assert normalizer.feed({"content": "<think>x", "reasoning": None}) == {
        "assistant": "<think>x",
        "thinking": "",
    }
    assert normalizer.finish() == {"assistant": "", "thinking": ""}


@pytest.mark.slow
def test_a_stream_of_no_chunks_ends_cleanly(lc: ModuleType) -> None:
    assert lc.OllamaReasoning().finish() == {"assistant": "", "thinking": ""}


@pytest.mark.slow
def test_message_chunks_are_read_as_users_read_them(lc: ModuleType, messages: ModuleType) -> None:
    blocks = messages.AIMessageChunk(
        content=[
            {"type": "reasoning", "reasoning": "r1"},
            {"type": "text", "text": "t"},
            {"type": "thinking", "thinking": "r2"},
        ]
    )
    assert lc.message_delta(blocks) == {"assistant": "t", "thinking": "r1r2"}
    kwargs = messages.AIMessageChunk(content="a", additional_kwargs={"reasoning_content": "r"})
    assert lc.message_delta(kwargs) == {"assistant": "a", "thinking": "r"}


@pytest.mark.slow
def test_a_client_error_is_raised_with_the_model_named(lc: ModuleType) -> None:
    normalizer = lc.OpenAI()
    channel = normalizer._start()
    lc.server().close(channel)  # the server now answers 404 for this stream's model
    with pytest.raises(RuntimeError, match=r"ChatOpenAI raised after chunk 1 was sent.*NotFound"):
        normalizer.feed({"content": "a", "reasoning": None})


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port that accepts connections and never answers."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    yield listener.getsockname()[1]
    listener.close()


@pytest.mark.slow
def test_a_client_that_yields_nothing_times_out_clearly(
    lc: ModuleType, silent_port: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    openai = pytest.importorskip("langchain_openai")
    model = openai.ChatOpenAI(
        model="m", base_url=f"http://127.0.0.1:{silent_port}/v1", api_key="-", max_retries=0
    )

    class Silent(lc.OpenAI):  # type: ignore[misc, name-defined]
        label = "ChatOpenAI (silent provider)"

        @classmethod
        def model(cls) -> object:
            return model

    monkeypatch.setattr(lc, "WAIT", 0.5)
    with pytest.raises(TimeoutError, match=r"yielded no message chunk within 0\.5 s after chunk 1"):
        Silent().feed({"content": "a", "reasoning": None})


@pytest.mark.slow
def test_the_node_adapter_measures_what_the_client_holds_back() -> None:
    """LangChain.js ChatDeepSeek holds a possible close tag back: the delta of the chunk that
    ends in `</thi` lacks it, and the next chunk's delta completes it (the adapter reads how
    far the client has read the body, not a count of message chunks)."""
    from conformance.adapters import adapter
    from conformance.model.chunks import Chunk
    from conformance.model.requests import StreamRequest
    from conformance.transport.impls import connect
    from conformance.transport.spec import parse_impl

    candidate = adapter("langchain-js-deepseek")
    reason = candidate.unavailable()
    if reason is not None:
        pytest.skip(reason)
    connection = connect(parse_impl(f"{candidate.label}={candidate.spec}"), timeout=30)
    try:
        chunks = (Chunk("<think>abc</thi"), Chunk("nk>Final"), Chunk(None, "R"))
        [reply] = connection.send([StreamRequest(chunks)])
    finally:
        connection.close()
    assert reply.deltas is not None
    assert list(reply.deltas) == [
        {"assistant": "", "thinking": "abc"},
        {"assistant": "Final", "thinking": ""},
        {"assistant": "", "thinking": "R"},
        {"assistant": "", "thinking": ""},
    ]
