#!/usr/bin/env node
// The Vercel AI SDK's extractReasoningMiddleware (npm package `ai`) as a protocol-1
// implementation (docs/PROTOCOL.md): one JSON request per line on stdin, one reply per line.
//
//   node vercel-ai.mjs                          # extractReasoningMiddleware({tagName: "think"})
//   node vercel-ai.mjs --start-with-reasoning   # ... with startWithReasoning: true
//
// A stream request goes through wrapLanguageModel(...).doStream(): each chunk becomes the
// language-model stream parts a provider sends (reasoning-delta for native reasoning, then
// text-delta for content), and the parts the middleware lets out before the next chunk
// arrives are that chunk's delta. A whole request goes through doGenerate() with a
// reasoning part and a text part. Nothing leaves the process: the wrapped model is the SDK's
// own MockLanguageModelV3 answering with the request's parts.
//
// This is the path the SDK itself takes: streamText() and generateText() call doStream() and
// doGenerate() of the model wrapLanguageModel returns, which run the middleware's wrapStream
// and wrapGenerate around the provider's model (checked against the installed `ai` package).

import { createRequire } from "node:module";
import { extractReasoningMiddleware, wrapLanguageModel } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { serve } from "./protocol.mjs";

const startWithReasoning = process.argv.includes("--start-with-reasoning");
const version = createRequire(import.meta.url)("ai/package.json").version;
const USAGE = { inputTokens: { total: 0 }, outputTokens: { total: 0 } };

function middleware() {
  return extractReasoningMiddleware({ tagName: "think", startWithReasoning });
}

// Lets every promise reaction already queued run, so the transform has handled the last part.
function settle() {
  return new Promise((resolve) => setImmediate(resolve));
}

function take(parts) {
  const delta = { assistant: "", thinking: "" };
  for (const part of parts.splice(0)) {
    if (part.type === "text-delta") delta.assistant += part.delta;
    else if (part.type === "reasoning-delta") delta.thinking += part.delta;
  }
  return delta;
}

async function stream(chunks) {
  let source;
  const input = new ReadableStream({ start: (controller) => { source = controller; } });
  const model = wrapLanguageModel({
    model: new MockLanguageModelV3({ doStream: async () => ({ stream: input }) }),
    middleware: middleware(),
  });
  const { stream: output } = await model.doStream({ prompt: [] });
  const parts = [];
  const reader = output.getReader();
  const pumped = (async () => {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      parts.push(value);
    }
  })();
  source.enqueue({ type: "stream-start", warnings: [] });
  let reasoningOpen = false;
  let textOpen = false;
  const deltas = [];
  for (const chunk of chunks) {
    if (chunk.reasoning) {
      if (!reasoningOpen) source.enqueue({ type: "reasoning-start", id: "native" });
      reasoningOpen = true;
      source.enqueue({ type: "reasoning-delta", id: "native", delta: chunk.reasoning });
    }
    if (chunk.content) {
      if (!textOpen) source.enqueue({ type: "text-start", id: "text" });
      textOpen = true;
      source.enqueue({ type: "text-delta", id: "text", delta: chunk.content });
    }
    await settle();
    deltas.push(take(parts));
  }
  if (reasoningOpen) source.enqueue({ type: "reasoning-end", id: "native" });
  if (textOpen) source.enqueue({ type: "text-end", id: "text" });
  source.enqueue({ type: "finish", finishReason: "stop", usage: USAGE });
  source.close();
  await pumped;
  deltas.push(take(parts));
  return { deltas };
}

async function whole(content, reasoning) {
  const parts = [];
  if (reasoning) parts.push({ type: "reasoning", text: reasoning });
  if (content != null) parts.push({ type: "text", text: content });
  const model = wrapLanguageModel({
    model: new MockLanguageModelV3({
      doGenerate: async () => ({ content: parts, finishReason: "stop", usage: USAGE, warnings: [] }),
    }),
    middleware: middleware(),
  });
  const result = await model.doGenerate({ prompt: [] });
  const reply = { assistant: "", thinking: "" };
  for (const part of result.content) {
    if (part.type === "text") reply.assistant += part.text;
    else if (part.type === "reasoning") reply.thinking += part.text;
  }
  return reply;
}

await serve({
  hello: {
    implementation: {
      name: startWithReasoning ? "ai extractReasoningMiddleware (startWithReasoning)" : "ai extractReasoningMiddleware",
      version,
      language: "typescript",
    },
    options: { delimiters: "think_only", start_in_reasoning: startWithReasoning, native_with_tags: "merge" },
  },
  stream,
  whole,
});
