// Issue 25, item 1: the gateway's credentials never reach a tenant through an upstream's error. Every provider
// protocol points at a hostile upstream that echoes each request (headers, partial and URL-encoded credentials, a
// token exchange's form body) inside its errors; every endpoint, JSON and streamed, failing before the first byte,
// with a text error page, and in band mid-stream; a project's own key and base_url (BYOK); a Vertex token exchange
// refused with the signed assertion quoted back. The client's answers, the access log and every exported OTLP span
// must hold no run of 12 characters of any credential the gateway sent — and must show the echo was there, masked.
// The shipped shape: SQLite store, the full default pipeline, a live key with a budget and rate limits.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { setTimeout as sleep } from "node:timers/promises";
import { keyEntry, postJson, testKey } from "./helpers/gateway.ts";
import { startLoggedGateway, type CapturedLog } from "./helpers/log-capture.ts";
import { startOtlpReceiver, type OtlpReceiver } from "./helpers/otlp-receiver.ts";
import { startHostileUpstream, type HostileMode, type HostileUpstream } from "./upstreams/hostile.ts";
import { makeServiceAccount } from "./upstreams/vertex-auth.ts";
import { observabilityOf } from "../core/observability/index.ts";
import type { RunningGateway } from "../core/server.ts";

const LIVE = testKey("hostile-live");
const TENANT = testKey("hostile-byok");
const SECRETS = {
  openai: "sk-hostile-openai-7f3a9c2e5b1d4f6a8c0e2b4d", // through ${HOSTILE_OPENAI_KEY}
  anthropic: "sk-ant-hostile-3c5e7a9b1d2f4a6c8e0b2d4f",
  gemini: "AIzaHostileGeminiKey-9a8b7c6d5e4f3a2b1c0d",
  cohere: "co-hostile-5f4e3d2c1b0a9f8e7d6c5b4a3f2e",
  byok: "sk-byok-tenant-own-1a2b3c4d5e6f7a8b9c0d",
  awsKeyId: "AKIAHOSTILE000000001",
  awsSecret: "hostile+Secret/Key000000000000000000000000",
  awsSession: "IQoJb3JpZ2luX2VjEHostileSessionToken000000000000000",
};
const RUN = 12;

let up: HostileUpstream;
let tokenUp: HostileUpstream;
let otlp: OtlpReceiver;
let gw: RunningGateway;
let log: CapturedLog;
let baseURL: string;

beforeAll(async () => {
  up = await startHostileUpstream();
  tokenUp = await startHostileUpstream();
  tokenUp.refuseTokens = true;
  otlp = await startOtlpReceiver();
  const sa = makeServiceAccount(`${up.origin}/token`);
  const refusedSa = makeServiceAccount(`${tokenUp.origin}/token`);
  const o = up.origin;
  const price = { input: "0.000001", output: "0.000002" };
  const model = (provider: string, upstream: string) => ({ endpoints: [{ provider, model: upstream, pricing: price }] });
  ({ gw, log, baseURL } = await startLoggedGateway({
    store: { kind: "sqlite", path: "./gateway.db" },
    telemetry: { otlp: { endpoint: otlp.url } },
    log: { access: true },
    // Every request here fails on purpose: the breaker must not start skipping the endpoints the cases need.
    routing: { backoff_ms: 1, circuit_breaker: { consecutive_failures: 10_000, min_requests: 10_000 } },
    providers: {
      "h-openai": { protocol: "openai", base_url: `${o}/v1`, api_key: "${HOSTILE_OPENAI_KEY}" },
      "h-anthropic": { protocol: "anthropic", base_url: o, api_key: SECRETS.anthropic },
      "h-gemini": { protocol: "gemini", base_url: o, api_key: SECRETS.gemini },
      "h-bedrock": { protocol: "bedrock", base_url: o, region: "us-west-2", aws_access_key_id: SECRETS.awsKeyId, aws_secret_access_key: SECRETS.awsSecret, aws_session_token: SECRETS.awsSession },
      "h-vertex": { protocol: "vertex", base_url: o, region: "us-east5", credentials_file: sa.file },
      "h-vertex-refused": { protocol: "vertex", base_url: o, region: "us-east5", credentials_file: refusedSa.file },
      "h-cohere": { protocol: "cohere", base_url: o, api_key: SECRETS.cohere },
    },
    models: {
      "h/openai-chat": model("h-openai", "gpt-hostile"),
      "h/openai-native": { endpoints: [{ provider: "h-openai", model: "gpt-hostile-r", native_responses: true, pricing: price }] },
      "h/claude": model("h-anthropic", "claude-hostile"),
      "h/gemini": model("h-gemini", "gemini-hostile"),
      "h/bedrock-llama": model("h-bedrock", "meta.llama3-3-70b-instruct-v1:0"),
      "h/bedrock-claude": model("h-bedrock", "anthropic.claude-sonnet-4-5-20250929-v1:0"),
      "h/vertex-gemini": model("h-vertex", "gemini-2.5-flash"),
      "h/vertex-claude": model("h-vertex", "claude-sonnet-4-5@20250929"),
      "h/vertex-refused": model("h-vertex-refused", "gemini-2.5-flash"),
      "h/embed-openai": { type: "embedding", dimensions: 8, endpoints: [{ provider: "h-openai", model: "emb-hostile" }] },
      "h/embed-gemini": { type: "embedding", dimensions: 8, endpoints: [{ provider: "h-gemini", model: "gemini-embedding-001" }] },
      "h/embed-cohere": { type: "embedding", dimensions: 8, endpoints: [{ provider: "h-cohere", model: "embed-v4.0" }] },
      "h/embed-bedrock": { type: "embedding", dimensions: 8, endpoints: [{ provider: "h-bedrock", model: "amazon.titan-embed-text-v2:0" }] },
      "h/rerank-cohere": { type: "reranking", endpoints: [{ provider: "h-cohere", model: "rerank-v3.5" }] },
      "h/image-openai": { type: "image", endpoints: [{ provider: "h-openai", model: "gpt-image-1" }] },
      "h/image-gemini": { type: "image", endpoints: [{ provider: "h-gemini", model: "imagen-4.0-generate-001" }] },
      "h/video-openai": { type: "video", limits: { poll_initial_ms: 5, poll_max_ms: 20 }, endpoints: [{ provider: "h-openai", model: "sora-2" }] },
      "h/video-gemini": { type: "video", limits: { poll_initial_ms: 5, poll_max_ms: 20 }, endpoints: [{ provider: "h-gemini", model: "veo-3.0-generate-001" }] },
    },
    projects: {
      live: { keys: [keyEntry("live", LIVE)], budget: { usd: "100", period: "month" }, rate_limits: { rpm: 100_000, tpm: 50_000_000 } },
      tenant: {
        keys: [keyEntry("tenant", TENANT)],
        allow_models: ["h/openai-chat"],
        providers: { "h-openai": { api_key: SECRETS.byok, base_url: `${o}/byok/v1` } },
      },
    },
  }, { HOSTILE_OPENAI_KEY: SECRETS.openai }));
});

afterAll(async () => {
  await gw?.close();
  await up?.close();
  await tokenUp?.close();
  await otlp?.close();
});

/** Every credential the gateway sent upstream (or holds for signing), with what the fakes saw at run time. */
function credentials(): string[] {
  const assertions = [...up.requests, ...tokenUp.requests]
    .filter((r) => r.path === "/token")
    .map((r) => new URLSearchParams(r.raw.toString("utf8")).get("assertion") ?? "");
  return [...Object.values(SECRETS), ...up.issued, ...assertions].filter((s) => s.length >= RUN);
}

/** Every run of RUN characters of a credential (as sent, or URL-encoded) found in text. */
function leaks(text: string): string[] {
  const found: string[] = [];
  for (const secret of credentials()) {
    for (const form of new Set([secret, encodeURIComponent(secret)])) {
      for (let i = 0; i + RUN <= form.length; i++) {
        if (text.includes(form.slice(i, i + RUN))) {
          found.push(`${form.slice(0, 8)}… (at ${i}: ${form.slice(i, i + RUN)})`);
          break;
        }
      }
    }
  }
  return found;
}

const MESSAGES = [{ role: "user", content: "hi" }];

interface Case { name: string; path: string; body: Record<string, unknown>; key?: string; stream?: boolean }

/** A request to every endpoint, on every provider protocol that serves it. */
const CASES: Case[] = [
  ...["h/openai-chat", "h/claude", "h/gemini", "h/bedrock-llama", "h/vertex-gemini", "h/vertex-claude"].flatMap((model) => [
    { name: `chat ${model}`, path: "/chat/completions", body: { model, messages: MESSAGES } },
    { name: `chat stream ${model}`, path: "/chat/completions", body: { model, messages: MESSAGES, stream: true }, stream: true },
  ]),
  ...["h/claude", "h/openai-chat", "h/bedrock-claude", "h/vertex-claude"].flatMap((model) => [
    { name: `messages ${model}`, path: "/messages", body: { model, max_tokens: 16, messages: MESSAGES } },
    { name: `messages stream ${model}`, path: "/messages", body: { model, max_tokens: 16, messages: MESSAGES, stream: true }, stream: true },
  ]),
  ...["h/openai-native", "h/openai-chat", "h/claude"].flatMap((model) => [
    { name: `responses ${model}`, path: "/responses", body: { model, input: "hi" } },
    { name: `responses stream ${model}`, path: "/responses", body: { model, input: "hi", stream: true }, stream: true },
  ]),
  { name: "count_tokens h/claude", path: "/messages/count_tokens", body: { model: "h/claude", messages: MESSAGES } },
  ...["h/embed-openai", "h/embed-gemini", "h/embed-cohere", "h/embed-bedrock"].map((model) => ({ name: `embeddings ${model}`, path: "/embeddings", body: { model, input: ["a cat"] } })),
  { name: "rerank h/rerank-cohere", path: "/rerank", body: { model: "h/rerank-cohere", query: "q", documents: ["a", "b"] } },
  ...["h/image-openai", "h/image-gemini"].map((model) => ({ name: `images ${model}`, path: "/images/generations", body: { model, prompt: "a lighthouse" } })),
  ...["h/video-openai", "h/video-gemini"].map((model) => ({ name: `videos ${model}`, path: "/videos", body: { model, prompt: "a lighthouse" } })),
  { name: "chat BYOK base_url", path: "/chat/completions", body: { model: "h/openai-chat", messages: MESSAGES }, key: TENANT },
  { name: "chat stream BYOK base_url", path: "/chat/completions", body: { model: "h/openai-chat", messages: MESSAGES, stream: true }, key: TENANT, stream: true },
];

async function send(c: Case) {
  const key = c.key ?? LIVE;
  const headers: Record<string, string> = c.path.startsWith("/messages") ? { "x-api-key": key, "anthropic-version": "2023-06-01" } : { authorization: `Bearer ${key}` };
  return postJson(`${baseURL}${c.path}`, c.body, headers);
}

describe.each<HostileMode>(["status", "text", "midstream"])("an upstream echoing the request in its errors (%s)", (mode) => {
  const cases = mode === "midstream" ? CASES.filter((c) => c.stream) : CASES;
  it.each(cases.map((c) => [c.name, c] as const))("%s: the echo reaches the client masked", async (_name, c) => {
    up.mode = mode;
    const before = up.requests.length;
    const r = await send(c);
    expect(up.requests.length, "the request reached the hostile upstream").toBeGreaterThan(before);
    const headers: string[] = [];
    r.headers.forEach((v, k) => headers.push(`${k}: ${v}`));
    const text = `${headers.join("\n")}\n${r.text}`;
    expect(leaks(text), text.slice(0, 2000)).toEqual([]);
    expect(r.text, "the upstream's echo is in the answer, masked").toContain("[redacted]");
    if (mode === "midstream") {
      expect(r.status).toBe(200); // failed in band, after the first event
      expect(r.text).toMatch(/event: error|data: \{"error"/);
    } else {
      expect(r.status).toBeGreaterThanOrEqual(400);
    }
  });
});

describe("around the upstream calls", () => {
  it("a Vertex token endpoint quoting the signed assertion back: masked", async () => {
    const r = await send({ name: "vertex refused", path: "/chat/completions", body: { model: "h/vertex-refused", messages: MESSAGES } });
    expect(tokenUp.requests.some((q) => q.path === "/token")).toBe(true);
    expect(r.status).toBe(502);
    expect(leaks(r.text), r.text.slice(0, 2000)).toEqual([]);
    expect(r.text).toContain("[redacted]");
  });

  it("the access log and the exported spans (attributes, events, status) hold no credential", async () => {
    for (let i = 0; i < 50; i++) {
      await observabilityOf(gw.gateway).tracing!.flush();
      if (otlp.spans.some((s) => s.statusMessage?.includes("[redacted]"))) break;
      await sleep(20);
    }
    const errored = otlp.spans.filter((s) => s.statusCode === 2);
    expect(errored.length).toBeGreaterThan(CASES.length);
    expect(errored.some((s) => s.statusMessage?.includes("[redacted]")), "span status messages carry the masked echo").toBe(true);
    expect(leaks(otlp.bodies.join("\n"))).toEqual([]);
    expect(log.access().length).toBeGreaterThan(CASES.length);
    expect(leaks(log.lines.join("\n"))).toEqual([]);
  });
});
