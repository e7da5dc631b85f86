#!/usr/bin/env node
// LangChain.js chat models as a protocol-1 implementation (docs/PROTOCOL.md), driven through
// real HTTP on 127.0.0.1: one JSON request per line on stdin, one reply per line.
//
//   node langchain.mjs openai     # ChatOpenAI from @langchain/openai (OpenAI-compatible SSE)
//   node langchain.mjs deepseek   # ChatDeepSeek from @langchain/deepseek (the same wire)
//   node langchain.mjs ollama     # ChatOllama from @langchain/ollama (Ollama /api/chat NDJSON)
//
// The process runs one HTTP server on 127.0.0.1 (an ephemeral port). A stream request opens a
// channel named as the model of a new chat model pointed at the server, and runs
// `model.stream(...)`: each chunk is written as one wire event (a `chat.completion.chunk` SSE
// event with `delta.content` / `delta.reasoning_content`, or an `/api/chat` line with
// `message.content` / `message.thinking`), and the chunk's delta is every message chunk the
// model yields until it asks for the next bytes of the response body. The model is given a
// `fetch` that is the global fetch with the response body passed through a stream of
// high-water mark 0 counting the bytes read: a read past an event's last byte means the
// client has finished with that event (its parsers are pulled, not pushed), so a chunk the
// client holds back shows as held back, and a chunk it splits in several shows as their sum.
// The end of the stream is the closing event (`finish_reason` + `[DONE]`, or `done: true`).
// A whole request is `model.invoke(...)`: ChatOpenAI and ChatDeepSeek send `stream: false`
// and get one message; ChatOllama streams and concatenates (its _generate).
//
// What the client yields is read as LangChain.js users read it: a message chunk's text content
// is the answer, `additional_kwargs.reasoning_content` (and reasoning content blocks) the
// reasoning.

import { createServer } from "node:http";
import { createRequire } from "node:module";
import { ChatDeepSeek } from "@langchain/deepseek";
import { ChatOllama } from "@langchain/ollama";
import { ChatOpenAI } from "@langchain/openai";
import { serve } from "./protocol.mjs";

const WAIT_MS = 30_000;
const PROMPT = "Say hello.";
const CREATED = "2026-01-01T00:00:00Z";
const kind = process.argv[2] ?? "openai";
const require = createRequire(import.meta.url);
const PACKAGES = { openai: "@langchain/openai", deepseek: "@langchain/deepseek", ollama: "@langchain/ollama" };
if (!(kind in PACKAGES)) {
  process.stderr.write(`usage: langchain.mjs openai|deepseek|ollama (not ${kind})\n`);
  process.exit(2);
}
const version = require(`${PACKAGES[kind]}/package.json`).version;
const NAMES = { openai: "ChatOpenAI", deepseek: "ChatDeepSeek", ollama: "ChatOllama" };

// -- the wire forms ---------------------------------------------------------------------------

const sse = (value) => Buffer.from(`data: ${JSON.stringify(value)}\n\n`);
const line = (value) => Buffer.from(JSON.stringify(value) + "\n");
const openaiChunk = (model, choice) => ({
  id: "chatcmpl-conformance", object: "chat.completion.chunk", created: 0, model, choices: [choice],
});

function openaiEvent(model, chunk, first) {
  const delta = first ? { role: "assistant" } : {};
  delta.content = chunk.content;
  if (chunk.reasoning != null) delta.reasoning_content = chunk.reasoning;
  return sse(openaiChunk(model, { index: 0, delta, finish_reason: null }));
}

function openaiEnd(model) {
  const stop = sse(openaiChunk(model, { index: 0, delta: {}, finish_reason: "stop" }));
  return Buffer.concat([stop, Buffer.from("data: [DONE]\n\n")]);
}

function openaiMessage(model, content, reasoning) {
  const message = { role: "assistant", content };
  if (reasoning != null) message.reasoning_content = reasoning;
  return line({
    id: "chatcmpl-conformance", object: "chat.completion", created: 0, model,
    choices: [{ index: 0, message, finish_reason: "stop" }],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  });
}

function ollamaLine(model, chunk, done = false) {
  const message = { role: "assistant", content: chunk.content ?? "" };
  if (chunk.reasoning != null) message.thinking = chunk.reasoning;
  const end = done ? { done_reason: "stop", prompt_eval_count: 1, eval_count: 1 } : {};
  return line({ model, created_at: CREATED, message, done, ...end });
}

const WIRE = kind === "ollama" ? "ollama" : "openai";
const PATH = WIRE === "ollama" ? "/api/chat" : "/v1/chat/completions";

// -- channels: one stream's events, and how far the client has read them ------------------

const channels = new Map();
let opened = 0;

class Channel {
  constructor() {
    this.name = `conformance-${++opened}`;
    this.events = []; // encoded events not yet written
    this.chunks = []; // for a response that does not stream
    this.ended = false;
    this.written = 0; // bytes of the body encoded so far
    this.read = 0; // bytes of the body the client has read
    this.readWaiting = false; // the client asks for more bytes than it has
    this.wake = () => {};
    channels.set(this.name, this);
  }
  send(chunk) {
    const first = this.chunks.length === 0;
    this.chunks.push(chunk);
    const event = WIRE === "openai" ? openaiEvent(this.name, chunk, first) : ollamaLine(this.name, chunk);
    this.push(event);
  }
  end() {
    this.ended = true;
    this.push(WIRE === "openai" ? openaiEnd(this.name) : ollamaLine(this.name, {}, true));
  }
  push(event) {
    this.written += event.length;
    this.events.push(event);
    this.wake();
  }
  close() {
    channels.delete(this.name);
  }
}

function answer(request, response, body) {
  let parsed;
  try {
    parsed = JSON.parse(body);
  } catch {
    parsed = null;
  }
  const channel = parsed && request.url.split("?")[0] === PATH ? channels.get(parsed.model) : undefined;
  if (!channel) {
    response.writeHead(404, { "content-type": "application/json" });
    response.end(JSON.stringify({ error: { message: `no stream is open for ${request.method} ${request.url}` } }));
    return;
  }
  const streaming = parsed.stream ?? WIRE === "ollama";
  if (!streaming) {
    const whole = () => {
      if (!channel.ended) return false;
      const join = (key) => (channel.chunks.some((c) => c[key] != null) ? channel.chunks.map((c) => c[key] ?? "").join("") : null);
      const content = join("content");
      const reasoning = join("reasoning");
      const data = WIRE === "openai" ? openaiMessage(channel.name, content, reasoning) : ollamaLine(channel.name, { content, reasoning }, true);
      response.writeHead(200, { "content-type": "application/json", "content-length": data.length });
      response.end(data);
      return true;
    };
    if (!whole()) channel.wake = whole;
    return;
  }
  response.writeHead(200, { "content-type": WIRE === "openai" ? "text/event-stream" : "application/x-ndjson" });
  response.flushHeaders();
  const drain = () => {
    for (const event of channel.events.splice(0)) response.write(event);
    if (channel.ended) response.end();
  };
  channel.wake = drain;
  drain();
}

const server = createServer((request, response) => {
  const parts = [];
  request.on("data", (part) => parts.push(part));
  request.on("end", () => answer(request, response, Buffer.concat(parts).toString("utf8")));
});
server.keepAliveTimeout = 60_000;
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const URL_ = `http://127.0.0.1:${server.address().port}`;

// The global fetch, with the response body read through a stream that pulls only when asked
// (high-water mark 0) and counts the bytes the client has read.
async function countingFetch(input, init) {
  const response = await fetch(input, init);
  let channel;
  try {
    channel = channels.get(JSON.parse(init?.body ?? "null")?.model);
  } catch {
    channel = undefined;
  }
  if (!channel || !response.body) return response;
  const reader = response.body.getReader();
  const body = new ReadableStream(
    {
      async pull(controller) {
        channel.readWaiting = true;
        poke();
        const { done, value } = await reader.read();
        channel.readWaiting = false;
        if (done) {
          controller.close();
          return;
        }
        channel.read += value.length;
        controller.enqueue(value);
      },
      cancel(reason) {
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}

function model(name) {
  if (kind === "ollama") return new ChatOllama({ model: name, baseUrl: URL_, fetch: countingFetch });
  const fields = { model: name, apiKey: "-", maxRetries: 0, configuration: { baseURL: `${URL_}/v1`, fetch: countingFetch } };
  return kind === "deepseek" ? new ChatDeepSeek(fields) : new ChatOpenAI(fields);
}

// -- what the client shows --------------------------------------------------------------------

function shown(message) {
  const delta = { assistant: "", thinking: "" };
  const content = message.content;
  if (typeof content === "string") delta.assistant += content;
  else if (Array.isArray(content)) {
    for (const block of content) {
      if (typeof block === "string") delta.assistant += block;
      else if (block?.type === "text") delta.assistant += block.text ?? "";
      else if (block?.type === "reasoning" || block?.type === "thinking") delta.thinking += block.reasoning ?? block.thinking ?? "";
    }
  }
  const reasoning = message.additional_kwargs?.reasoning_content;
  if (typeof reasoning === "string" && !delta.thinking) delta.thinking += reasoning;
  return delta;
}

function sum(messages) {
  const delta = { assistant: "", thinking: "" };
  for (const message of messages.splice(0)) {
    const one = shown(message);
    delta.assistant += one.assistant;
    delta.thinking += one.thinking;
  }
  return delta;
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

// Waiters for a condition, checked whenever the client reads or a stream finishes.
const waiters = new Set();
function poke() {
  for (const waiter of waiters) waiter();
}

function until(condition, what) {
  return new Promise((resolve, reject) => {
    const done = async () => {
      if (!condition()) return;
      waiters.delete(done);
      clearTimeout(timer);
      // Let what the client made of the bytes it read reach the consumer (promise jobs).
      await settle();
      await settle();
      resolve();
    };
    const timer = setTimeout(() => {
      waiters.delete(done);
      reject(new Error(`${NAMES[kind]} ${what} within ${WAIT_MS / 1000} s`));
    }, WAIT_MS);
    waiters.add(done);
    done();
  });
}

async function stream(chunks) {
  const channel = new Channel();
  const messages = [];
  let finished = false;
  let failure;
  const consumer = (async () => {
    try {
      for await (const message of await model(channel.name).stream(PROMPT)) messages.push(message);
    } catch (error) {
      failure = error;
    } finally {
      finished = true;
      poke();
    }
  })();
  const deltas = [];
  try {
    for (const [index, chunk] of chunks.entries()) {
      channel.send(chunk);
      const target = channel.written;
      await until(() => finished || (channel.readWaiting && channel.read >= target), `did not read chunk ${index + 1}'s event`);
      if (failure) throw failure;
      deltas.push(sum(messages));
    }
    channel.end();
    await until(() => finished, "did not end the stream");
    await consumer;
    if (failure) throw failure;
    deltas.push(sum(messages));
  } finally {
    channel.close();
  }
  return { deltas };
}

async function whole(content, reasoning) {
  const channel = new Channel();
  try {
    channel.send({ content, reasoning });
    channel.end();
    return shown(await model(channel.name).invoke(PROMPT));
  } finally {
    channel.close();
  }
}

await serve({
  hello: {
    implementation: { name: `${PACKAGES[kind]} ${NAMES[kind]}`, version, language: "typescript" },
    options: kind === "deepseek" ? { delimiters: "think_only" } : {},
  },
  stream,
  whole,
});
server.close();
process.exit(0);
