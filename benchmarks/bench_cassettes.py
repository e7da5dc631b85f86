"""How fast cassettes decode and replay. Prints figures; asserts nothing.

    python benchmarks/bench_cassettes.py [--megabytes 20]

- decoding: a large OpenAI Chat Completions SSE cassette (token-sized deltas, reasoning then
  content, as DeepSeek sends them), loaded with vcrpy and decoded into chunks; MB/s of
  response body, for the load, the decode alone, and both;
- the same for an Anthropic named-event stream and an Ollama NDJSON stream;
- the replay server: that SSE body served by `conformance serve` (frames, and adversarial
  splits) to a streaming httpx client on 127.0.0.1; MB/s and HTTP chunks per second.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx

from conformance.cassettes import decode_interaction, load_cassette, write_cassette
from conformance.replay.http_server import ReplayServer, cut_points

#: Token-sized pieces, with delimiters and multi-byte characters for the adversarial split.
WORDS = ["the", "user", "asks", "<think>", "how", "many", "r", "in", "草莓", "</think>", "é"]


def chat_body(megabytes: float) -> str:
    events, size, index = [], 0, 0
    while size < megabytes * 1_000_000:
        field = "reasoning_content" if index % 3 else "content"
        delta = {field: f" {WORDS[index % len(WORDS)]}", "role": None}
        event = {
            "id": "chatcmpl-bench",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "deepseek-reasoner",
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": None}],
        }
        line = f"data: {json.dumps(event, separators=(',', ':'))}\n\n"
        events.append(line)
        size += len(line)
        index += 1
    finish = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    return "".join(events) + f"data: {json.dumps(finish)}\n\ndata: [DONE]\n\n"


def anthropic_body(megabytes: float) -> str:
    events, size, index = [], 0, 0
    while size < megabytes * 1_000_000:
        kind, key = ("thinking_delta", "thinking") if index % 3 else ("text_delta", "text")
        data = {"type": "content_block_delta", "index": 0, "delta": {"type": kind, key: " word"}}
        line = f"event: content_block_delta\ndata: {json.dumps(data)}\n\n"
        events.append(line)
        size += len(line)
        index += 1
    return "".join(events) + 'event: message_stop\ndata: {"type":"message_stop"}\n\n'


def ollama_body(megabytes: float) -> str:
    lines, size, index = [], 0, 0
    while size < megabytes * 1_000_000:
        message = {"role": "assistant", "content": "" if index % 3 else " word"}
        if index % 3:
            message["thinking"] = " word"
        line = json.dumps({"model": "qwen3:4b", "message": message, "done": False}) + "\n"
        lines.append(line)
        size += len(line)
        index += 1
    done = {"model": "qwen3:4b", "message": {"role": "assistant", "content": ""}, "done": True}
    return "".join(lines) + json.dumps(done) + "\n"


def best(function: Callable[[], object], repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def decoding(directory: Path, name: str, uri: str, body: str, content_type: str) -> Path:
    path = write_cassette(
        directory / f"{name}.yaml", [{"uri": uri, "body": body, "content_type": content_type}]
    )
    size = len(body.encode()) / 1e6
    interaction = load_cassette(path).interactions[0]
    load = best(lambda: load_cassette(path))
    decode = best(lambda: decode_interaction(interaction))
    chunks = len(decode_interaction(interaction).chunks)
    print(
        f"{name:<22} {size:6.1f} MB, {chunks:>8,} chunks: load {size / load:6.1f} MB/s, "
        f"decode {size / decode:6.1f} MB/s ({chunks / decode / 1e6:.2f} M chunks/s), "
        f"both {size / (load + decode):6.1f} MB/s"
    )
    return path


def serving(directory: Path, path: Path, split: str) -> None:
    interaction = load_cassette(path).interactions[0]
    body = interaction.body
    pieces = len(cut_points(body, "sse", split)) + 1
    with ReplayServer(directory, split=split) as server:
        url = f"{server.url}/{path.stem}/v1/chat/completions"

        def fetch() -> None:
            with httpx.stream("POST", url, json={}, timeout=600) as response:
                received = sum(len(part) for part in response.iter_raw())
            assert received == len(body)

        seconds = best(fetch, repeat=2)
    size = len(body) / 1e6
    print(
        f"serve, split {split:<12} {size:6.1f} MB in {pieces:>9,} HTTP chunks: "
        f"{size / seconds:6.1f} MB/s, {pieces / seconds / 1e3:6.1f} k chunks/s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=float, default=20.0)
    size = parser.parse_args().megabytes
    with tempfile.TemporaryDirectory() as temporary:
        directory = Path(temporary)
        chat = decoding(
            directory,
            "openai-chat-sse",
            "https://api.deepseek.com/v1/chat/completions",
            chat_body(size),
            "text/event-stream",
        )
        decoding(
            directory,
            "anthropic-sse",
            "https://api.anthropic.com/v1/messages",
            anthropic_body(size),
            "text/event-stream",
        )
        decoding(
            directory,
            "ollama-ndjson",
            "http://localhost:11434/api/chat",
            ollama_body(size),
            "application/x-ndjson",
        )
        serving(directory, chat, "frames")
        small = decoding(
            directory,
            "openai-chat-sse-small",
            "https://api.deepseek.com/v1/chat/completions",
            chat_body(size / 10),
            "text/event-stream",
        )
        serving(directory, small, "adversarial")


if __name__ == "__main__":
    main()
