"""A fake model provider on 127.0.0.1 that speaks every wire family, for recording tests.

    python tests/fakes/fake_provider.py [--port N]     # prints its base URL, serves until killed

Routes, as the real providers have them:

- `POST /v1/chat/completions` (OpenAI Chat Completions; SSE when `"stream": true`)
- `POST /v1/responses` (OpenAI Responses; named-event SSE when streaming)
- `POST /v1/messages` (Anthropic Messages; named-event SSE when streaming)
- `POST /v1beta/models/<model>:generateContent`, `:streamGenerateContent` (Gemini: SSE with
  CRLF with `?alt=sse`, else one JSON array)
- `POST /api/chat`, `/api/generate` (Ollama: NDJSON unless `"stream": false`)

Every route wants a credential, where that provider takes it (a bearer token, `x-api-key`,
`x-goog-api-key` or `?key=`), and answers 401 without one. Responses carry the
account-identifying headers real ones do (`set-cookie`, `openai-organization`, ...), and
headers of no known name whose values look like a key or a session, so a recorder has
something to scrub. The answer depends on the model name:

- `fake-native`: reasoning in the family's native field, then the answer;
- `fake-tags`: `<think>...</think>` in the answer text, split inside both tags;
- `fake-leak`: like fake-native, but the answer repeats the credential it was sent, which a
  recorder must refuse to write.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

REASONING = ["The user ", "says: ", "{prompt}."]
ANSWER = ["Echo: ", "{prompt}"]
#: The answer of `fake-tags`: the open tag split after `<th`, the close after `</thi`.
TAGGED = ["<th", "ink>Thinking about ", "{prompt}.</thi", "nk>\n\nEcho: ", "{prompt}"]
ACCOUNT_HEADERS = {
    "set-cookie": "__cf_bm=fAkEcOoKiE0123456789abcdef; path=/; HttpOnly",
    "openai-organization": "org-fake0123456789",
    "openai-project": "proj_fake0123456789",
    "anthropic-organization-id": "1f2e3d4c-fake-4b5a-9c8d-0123456789ab",
    "x-request-id": "req_fake0123456789",
    "cf-ray": "8f00fake0000abcd-AMS",
}
#: Headers no recorder knows by name whose values look like credentials or sessions.
SHAPED_HEADERS = {
    "x-echo-debug": "upstream key sk-proj-fakeFAKEfake0123456789abcd",
    "x-session-handle": "fAkEsEsSiOn0123456789abcdefXYZ",
}


def script(model: str, prompt: str, secret: str) -> tuple[list[str], list[str]]:
    """(native reasoning pieces, answer pieces) for a model and prompt."""
    fill = [piece.format(prompt=prompt) for piece in REASONING]
    if model == "fake-tags":
        return [], [piece.format(prompt=prompt) for piece in TAGGED]
    answer = [piece.format(prompt=prompt) for piece in ANSWER]
    if model == "fake-leak":
        answer.append(f" (your key is {secret})")
    return fill, answer


def sse(data: Any, event: str | None = None, newline: str = "\n") -> str:
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    head = f"event: {event}{newline}" if event else ""
    return f"{head}data: {text}{newline}{newline}"


# ----------------------------------------------------------------------------- families


def openai_chat(model: str, reasoning: list[str], answer: list[str], stream: bool) -> Iterator[str]:
    base = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1, "model": model}
    if not stream:
        message = {"role": "assistant", "content": "".join(answer)}
        if reasoning:
            message["reasoning_content"] = "".join(reasoning)
        yield json.dumps(
            {
                **base,
                "object": "chat.completion",
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            }
        )
        return

    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        return sse({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

    yield chunk({"role": "assistant", "content": ""})
    for piece in reasoning:
        yield chunk({"content": None, "reasoning_content": piece})
    for piece in answer:
        yield chunk({"content": piece})
    yield chunk({}, "stop")
    yield sse({**base, "choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 9}})
    yield sse("[DONE]")


def openai_responses(
    model: str, reasoning: list[str], answer: list[str], stream: bool
) -> Iterator[str]:
    output = []
    if reasoning:
        output.append(
            {
                "type": "reasoning",
                "id": "rs_fake",
                "summary": [{"type": "summary_text", "text": "".join(reasoning)}],
            }
        )
    output.append(
        {
            "type": "message",
            "id": "msg_fake",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "".join(answer), "annotations": []}],
        }
    )
    response = {
        "id": "resp_fake",
        "object": "response",
        "model": model,
        "status": "completed",
        "output": output,
    }
    if not stream:
        yield json.dumps(response)
        return
    number = iter(range(1000))

    def event(kind: str, **fields: Any) -> str:
        return sse({"type": kind, "sequence_number": next(number), **fields}, kind)

    yield event("response.created", response={**response, "status": "in_progress", "output": []})
    for piece in reasoning:
        yield event("response.reasoning_summary_text.delta", item_id="rs_fake", delta=piece)
    for piece in answer:
        yield event("response.output_text.delta", item_id="msg_fake", delta=piece)
    yield event("response.completed", response=response)


def anthropic(model: str, reasoning: list[str], answer: list[str], stream: bool) -> Iterator[str]:
    blocks = []
    if reasoning:
        blocks.append(
            {"type": "thinking", "thinking": "".join(reasoning), "signature": "c2lnbmF0dXJl"}
        )
    blocks.append({"type": "text", "text": "".join(answer)})
    message = {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": blocks,
        "stop_reason": "end_turn",
    }
    if not stream:
        yield json.dumps(message)
        return

    def event(kind: str, **fields: Any) -> str:
        return sse({"type": kind, **fields}, kind)

    yield event("message_start", message={**message, "content": [], "stop_reason": None})
    index = 0
    if reasoning:
        yield event(
            "content_block_start", index=index, content_block={"type": "thinking", "thinking": ""}
        )
        for piece in reasoning:
            yield event(
                "content_block_delta",
                index=index,
                delta={"type": "thinking_delta", "thinking": piece},
            )
        yield event(
            "content_block_delta",
            index=index,
            delta={"type": "signature_delta", "signature": "c2lnbmF0dXJl"},
        )
        yield event("content_block_stop", index=index)
        index += 1
    yield event("content_block_start", index=index, content_block={"type": "text", "text": ""})
    yield sse({"type": "ping"}, "ping")
    for piece in answer:
        yield event("content_block_delta", index=index, delta={"type": "text_delta", "text": piece})
    yield event("content_block_stop", index=index)
    yield event(
        "message_delta",
        delta={"stop_reason": "end_turn", "stop_sequence": None},
        usage={"output_tokens": 9},
    )
    yield event("message_stop")


def gemini(model: str, reasoning: list[str], answer: list[str], mode: str) -> Iterator[str]:
    def response(parts: list[dict[str, Any]], finish: bool) -> dict[str, Any]:
        candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}, "index": 0}
        if finish:
            candidate["finishReason"] = "STOP"
        return {"candidates": [candidate], "modelVersion": model}

    parts = [{"text": piece, "thought": True} for piece in reasoning] + [
        {"text": piece} for piece in answer
    ]
    if mode == "whole":
        yield json.dumps(
            response(
                [{"text": "".join(reasoning), "thought": True}] * bool(reasoning)
                + [{"text": "".join(answer)}],
                True,
            )
        )
        return
    events = [response([part], index == len(parts) - 1) for index, part in enumerate(parts)]
    if mode == "sse":
        for item in events:
            yield sse(item, newline="\r\n")
        return
    yield "[" + ",\r\n".join(json.dumps(item, indent=1) for item in events) + "]"


def ollama(
    model: str, reasoning: list[str], answer: list[str], stream: bool, generate: bool
) -> Iterator[str]:
    def line(content: str, thinking: str | None, done: bool) -> str:
        value: dict[str, Any] = {"model": model, "created_at": "2025-01-01T00:00:00Z"}
        if generate:
            value["response"] = content
            if thinking is not None:
                value["thinking"] = thinking
        else:
            value["message"] = {"role": "assistant", "content": content}
            if thinking is not None:
                value["message"]["thinking"] = thinking
        value["done"] = done
        if done:
            value.update(done_reason="stop", eval_count=9)
        # Go's encoding/json escapes < and >, as Ollama's server does.
        return (
            json.dumps(value, ensure_ascii=False).replace("<", "\\u003c").replace(">", "\\u003e")
            + "\n"
        )

    if not stream:
        yield line("".join(answer), "".join(reasoning) or None, True)
        return
    for piece in reasoning:
        yield line("", piece, False)
    for piece in answer:
        yield line(piece, None, False)
    yield line("", None, True)


# ----------------------------------------------------------------------------- server


class FakeProvider(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-provider"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        parts = urlsplit(self.path)
        query = parse_qs(parts.query)
        body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
        secret = self._credential(query)
        if secret is None:
            self._send(
                401,
                "application/json",
                [json.dumps({"error": {"type": "authentication_error", "message": "no API key"}})],
            )
            return
        path = parts.path
        gemini_match = re.fullmatch(
            r"/v1beta/models/([^/:]+):(generateContent|streamGenerateContent)", path
        )
        model = gemini_match.group(1) if gemini_match else body.get("model", "")
        prompt = self._prompt(body)
        reasoning, answer = script(model, prompt, secret)
        stream = bool(body.get("stream"))
        if path == "/v1/chat/completions":
            self._send(200, _type(stream), openai_chat(model, reasoning, answer, stream))
        elif path == "/v1/responses":
            self._send(200, _type(stream), openai_responses(model, reasoning, answer, stream))
        elif path == "/v1/messages":
            self._send(200, _type(stream), anthropic(model, reasoning, answer, stream))
        elif gemini_match:
            mode = "whole" if gemini_match.group(2) == "generateContent" else "array"
            if mode == "array" and query.get("alt") == ["sse"]:
                mode = "sse"
            kind = "text/event-stream" if mode == "sse" else "application/json; charset=UTF-8"
            self._send(200, kind, gemini(model, reasoning, answer, mode))
        elif path in ("/api/chat", "/api/generate"):
            stream = body.get("stream", True) is not False
            kind = "application/x-ndjson" if stream else "application/json; charset=utf-8"
            self._send(200, kind, ollama(model, reasoning, answer, stream, path == "/api/generate"))
        else:
            self._send(404, "application/json", [json.dumps({"error": f"no route {path}"})])

    def _credential(self, query: dict[str, list[str]]) -> str | None:
        authorization = self.headers.get("authorization", "")
        if authorization.lower().startswith("bearer "):
            return authorization[7:]
        for name in ("x-api-key", "x-goog-api-key", "api-key"):
            if self.headers.get(name):
                return self.headers[name]
        return query.get("key", [None])[0]

    @staticmethod
    def _prompt(body: dict[str, Any]) -> str:
        if "messages" in body:
            return str(body["messages"][-1]["content"])
        if "contents" in body:
            return str(body["contents"][-1]["parts"][0]["text"])
        return str(body.get("input") or body.get("prompt") or "")

    def _send(self, status: int, content_type: str, pieces: Any) -> None:
        self.send_response(status)
        self.send_header("content-type", content_type)
        for name, value in {**ACCOUNT_HEADERS, **SHAPED_HEADERS}.items():
            self.send_header(name, value)
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        for piece in pieces:
            data = piece.encode()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.write(b"0\r\n\r\n")


def _type(stream: bool) -> str:
    return "text/event-stream; charset=utf-8" if stream else "application/json"


class FakeProviderServer:
    """The fake provider in a background thread: `with FakeProviderServer() as url: ...`."""

    def __init__(self, port: int = 0) -> None:
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), FakeProvider)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> str:
        self.thread.start()
        return self.url

    def __exit__(self, *_: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    port = parser.parse_args(argv).port
    server = FakeProviderServer(port)
    print(server.url, flush=True)
    try:
        server.httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.httpd.server_close()


if __name__ == "__main__":
    sys.exit(main())
