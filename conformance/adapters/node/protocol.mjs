// The project's JSON-lines protocol (docs/PROTOCOL.md) for the Node adapters: one request per
// line on standard input, one reply per line on standard output, until `bye` or the end of
// input. An adapter gives its `hello` reply and its `stream` and `whole` operations; a line
// that is not JSON, or an operation that throws, is answered with an `error` reply naming it.
import { createInterface } from "node:readline";

async function answer(request, adapter) {
  switch (request.op) {
    case "hello":
      return { protocol: 1, ...adapter.hello };
    case "stream":
      return { id: request.id, ...(await adapter.stream(request.chunks)) };
    case "whole":
      return { id: request.id, ...(await adapter.whole(request.content, request.reasoning)) };
    default:
      return { id: request.id ?? null, unsupported: `unknown op ${JSON.stringify(request.op)}` };
  }
}

export async function serve(adapter) {
  for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
    if (!line.trim()) continue;
    let request;
    try {
      request = JSON.parse(line);
    } catch (error) {
      process.stdout.write(JSON.stringify({ id: null, error: `not JSON: ${error.message}` }) + "\n");
      continue;
    }
    if (request.op === "bye") break;
    let reply;
    try {
      reply = await answer(request, adapter);
    } catch (error) {
      reply = { id: request.id ?? null, error: `raised ${error?.name}: ${error?.message}` };
    }
    process.stdout.write(JSON.stringify(reply) + "\n");
  }
}
