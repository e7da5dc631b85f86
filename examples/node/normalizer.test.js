// @ts-check
// `node --test`: the examples of SPEC.md this normalizer is built around.
import assert from "node:assert/strict";
import { test } from "node:test";

import { normalizeStream, normalizeWhole } from "./normalizer.js";

/** @param {Array<string | {content?: string, reasoning?: string}>} items */
const chunks = (items) => items.map((item) => (typeof item === "string" ? { content: item } : item));
/** @param {Array<[string, string]>} pairs */
const deltas = (pairs) => pairs.map(([assistant, thinking]) => ({ assistant, thinking }));

test("a close tag split across chunks is held back", () => {
  assert.deepEqual(
    normalizeStream(chunks(["<think>abc</thi", "nk>Final"])),
    deltas([["", "abc"], ["Final", ""], ["", ""]]),
  );
});

test("held-back text is flushed at the end", () => {
  assert.deepEqual(normalizeStream(chunks(["x <think"])), deltas([["x ", ""], ["<think", ""]]));
});

test("an orphan close keeps the text before it", () => {
  assert.deepEqual(normalizeWhole("...done</think>answer", null), {
    assistant: "...doneanswer",
    thinking: "",
  });
});

test("a held-back character belongs to the moment it arrived", () => {
  assert.deepEqual(
    normalizeStream(chunks(["<think>ab<", { reasoning: "R", content: "c</think>x" }])),
    deltas([["", "ab"], ["x", "R<"], ["", ""]]),
  );
});

test("characters outside the BMP are characters", () => {
  assert.deepEqual(normalizeWhole("😀<think>🤔</think>😀", null), {
    assistant: "😀😀",
    thinking: "🤔",
  });
});
