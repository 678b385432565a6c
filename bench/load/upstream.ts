// A lean fake OpenAI upstream for load runs: the same wire format as test/upstreams/openai.ts (reference §1:
// role chunk, one content chunk per word, finish chunk, usage chunk when include_usage, `data: [DONE]`), but the
// frames are rendered once per model and reused, so the upstream spends as little of the shared 2 cores as it can.
// Run as a child process: prints `READY {"port":N}` on stdout.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { parseArgs } from "node:util";
import { pathToFileURL } from "node:url";

import { UPSTREAM_KEY } from "./upstream-key.ts";

export { UPSTREAM_KEY };

export interface FakeUpstreamOptions {
  /** SSE frames with content per stream (plus role, finish, usage and [DONE]); default 50. */
  chunks?: number;
  /** Fraction of requests answered with `failStatus` (deterministic: spread evenly); default 0. */
  failRate?: number;
  failStatus?: number;
  /** Milliseconds between stream frames; 0 writes them back to back. */
  chunkDelayMs?: number;
}

const ID = "chatcmpl-bench0001";
const CREATED = 1770933883;
const USAGE = (completion: number) => ({
  prompt_tokens: 12,
  completion_tokens: completion,
  total_tokens: 12 + completion,
  prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
  completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
});

interface Rendered { frames: string[]; json: string }

/** The stream frames and the non-stream body for one (model, include_usage) pair. */
export function render(model: string, chunks: number, includeUsage: boolean): Rendered {
  const base = { id: ID, object: "chat.completion.chunk", created: CREATED, model, service_tier: "default", system_fingerprint: "fp_bench" };
  const frame = (choices: unknown[], extra: Record<string, unknown> = {}) =>
    `data: ${JSON.stringify({ ...base, choices, ...(includeUsage ? { usage: null } : {}), ...extra })}\n\n`;
  const words = Array.from({ length: chunks }, (_, i) => (i === 0 ? "Token" : ` token${i}`));
  const frames = [frame([{ index: 0, delta: { role: "assistant", content: "", refusal: null }, logprobs: null, finish_reason: null }])];
  for (const w of words) frames.push(frame([{ index: 0, delta: { content: w }, logprobs: null, finish_reason: null }]));
  frames.push(frame([{ index: 0, delta: {}, logprobs: null, finish_reason: "stop" }]));
  if (includeUsage) frames.push(frame([], { usage: USAGE(chunks) }));
  frames.push("data: [DONE]\n\n");
  const json = JSON.stringify({
    id: ID, object: "chat.completion", created: CREATED, model,
    choices: [{ index: 0, message: { role: "assistant", content: words.join(""), refusal: null, annotations: [] }, logprobs: null, finish_reason: "stop" }],
    usage: USAGE(chunks), service_tier: "default", system_fingerprint: "fp_bench",
  });
  return { frames, json };
}

const MODERATION = JSON.stringify({ id: "modr-bench", model: "omni-moderation-2024-09-26", results: [{ flagged: false, categories: { violence: false, harassment: false }, category_scores: { violence: 0.0001, harassment: 0.0001 } }] });

const ERROR = (status: number) => JSON.stringify({ error: { message: `fake upstream failure ${status}`, type: "server_error", param: null, code: null } });

export function createFakeUpstream(opts: FakeUpstreamOptions = {}): Server {
  const chunks = opts.chunks ?? 50;
  const failRate = opts.failRate ?? 0;
  const failStatus = opts.failStatus ?? 500;
  const delay = opts.chunkDelayMs ?? 0;
  const cache = new Map<string, Rendered>();
  let served = 0;

  function answer(req: IncomingMessage, res: ServerResponse, raw: string) {
    // OpenAI's moderation API, for the guardrails' moderation: nothing is flagged.
    if (req.url === "/v1/moderations" && req.method === "POST") {
      res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(MODERATION) });
      res.end(MODERATION);
      return;
    }
    if (req.url !== "/v1/chat/completions" || req.method !== "POST") {
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: `Unknown request URL: ${req.method} ${req.url}`, type: "invalid_request_error", param: null, code: "unknown_url" } }));
      return;
    }
    if (req.headers.authorization !== `Bearer ${UPSTREAM_KEY}`) {
      res.writeHead(401, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: "Incorrect API key provided", type: "invalid_request_error", param: null, code: "invalid_api_key" } }));
      return;
    }
    let body: any;
    try {
      body = JSON.parse(raw);
    } catch {
      res.writeHead(400, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: "We could not parse the JSON body of your request.", type: "invalid_request_error", param: null, code: null } }));
      return;
    }
    // Deterministic failure spread: request n fails when floor(n*rate) advances.
    const n = served++;
    if (failRate > 0 && Math.floor((n + 1) * failRate) > Math.floor(n * failRate)) {
      res.writeHead(failStatus, { "content-type": "application/json", "x-request-id": "req_fake_err" });
      res.end(ERROR(failStatus));
      return;
    }
    const stream = body?.stream === true;
    const includeUsage = stream && body.stream_options?.include_usage === true;
    const key = `${body?.model}\n${includeUsage}`;
    let r = cache.get(key);
    if (!r) cache.set(key, (r = render(String(body?.model), chunks, includeUsage)));
    if (!stream) {
      res.writeHead(200, { "content-type": "application/json", "x-request-id": "req_fake_1", "content-length": Buffer.byteLength(r.json) });
      res.end(r.json);
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", connection: "keep-alive", "x-request-id": "req_fake_1" });
    const frames = r.frames;
    if (delay <= 0) {
      for (let i = 0; i < frames.length; i++) res.write(frames[i]);
      res.end();
      return;
    }
    let i = 0;
    const tick = () => {
      if (res.destroyed) return;
      res.write(frames[i++]);
      if (i < frames.length) setTimeout(tick, delay);
      else res.end();
    };
    tick();
  }

  return createServer((req, res) => {
    let raw = "";
    req.setEncoding("utf8");
    req.on("data", (c: string) => { raw += c; });
    req.on("end", () => answer(req, res, raw));
  });
}

async function main() {
  const { values } = parseArgs({
    options: {
      chunks: { type: "string" }, "fail-rate": { type: "string" }, "fail-status": { type: "string" }, "chunk-delay-ms": { type: "string" },
    },
  });
  const server = createFakeUpstream({
    chunks: values.chunks ? Number(values.chunks) : undefined,
    failRate: values["fail-rate"] ? Number(values["fail-rate"]) : undefined,
    failStatus: values["fail-status"] ? Number(values["fail-status"]) : undefined,
    chunkDelayMs: values["chunk-delay-ms"] ? Number(values["chunk-delay-ms"]) : undefined,
  });
  server.keepAliveTimeout = 65_000;
  server.listen(0, "127.0.0.1", () => {
    process.stdout.write(`READY ${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`);
  });
  process.on("SIGTERM", () => process.exit(0));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) void main();
