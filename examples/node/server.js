#!/usr/bin/env node
// @ts-check
/**
 * The normalizer of normalizer.js speaking the conformance suite's protocol, version 1
 * (docs/PROTOCOL.md): one JSON request per line on stdin, one response line per request on
 * stdout, in order. Plain Node, no dependencies.
 *
 *     conformance run --impl "node=cmd:node examples/node/server.js"
 */

import { readFileSync } from "node:fs";

import { normalizeStream, normalizeWhole } from "./normalizer.js";

const { version } = JSON.parse(readFileSync(new URL("./package.json", import.meta.url), "utf8"));
const HELLO = JSON.stringify({
  protocol: 1,
  implementation: { name: "think-normalizer-js", version, language: "javascript" },
  options: {},
});
const NEWLINE = 0x0a;

/**
 * The response line to one request line, or null for `bye`.
 * @param {string} line
 * @returns {string | null}
 */
function handle(line) {
  /** @type {any} */
  let request;
  try {
    request = JSON.parse(line);
  } catch (error) {
    // Without an id the harness cannot match a reply; it restarts the process.
    process.stderr.write(`think-normalizer-js: unreadable request: ${error}\n`);
    return JSON.stringify({ id: null, error: `unreadable request: ${error}` });
  }
  const id = request?.id ?? null;
  try {
    switch (request?.op) {
      case "bye":
        return null;
      case "hello":
        return request.protocol === 1
          ? HELLO
          : JSON.stringify({ error: "think-normalizer-js speaks protocol version 1 only" });
      case "stream": {
        if (!Array.isArray(request.chunks)) throw new TypeError("`chunks` must be an array");
        return JSON.stringify({ id, deltas: normalizeStream(request.chunks) });
      }
      case "whole":
        return JSON.stringify({ id, ...normalizeWhole(request.content, request.reasoning) });
      default:
        return JSON.stringify({ id, unsupported: `unknown op ${JSON.stringify(request?.op)}` });
    }
  } catch (error) {
    // A caught failure is an ERROR for this request; the process carries on.
    return JSON.stringify({ id, error: String(error) });
  }
}

/** Bytes of a line not yet complete. @type {Buffer[]} */
let partial = [];

process.stdin.on("data", (/** @type {Buffer} */ data) => {
  // Split on the `\n` byte only: U+2028 and friends are text, not line breaks. Answer every
  // complete line of this read in one write: the harness pipelines its requests.
  /** @type {string[]} */
  const replies = [];
  let start = 0;
  let end;
  while ((end = data.indexOf(NEWLINE, start)) !== -1) {
    partial.push(data.subarray(start, end));
    const line = Buffer.concat(partial).toString("utf8");
    partial = [];
    start = end + 1;
    if (!line.trim()) continue;
    const reply = handle(line);
    if (reply === null) {
      process.stdout.write(replies.map((r) => r + "\n").join(""), () => process.exit(0));
      process.stdin.pause();
      return;
    }
    replies.push(reply);
  }
  if (start < data.length) partial.push(data.subarray(start));
  if (replies.length) process.stdout.write(replies.join("\n") + "\n");
});

process.stdin.on("end", () => process.stdout.write("", () => process.exit(0)));
