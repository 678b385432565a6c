// A stream cut before its usage arrived is billed the output its upstream generated, in a project with an output
// rule as in one without: the text the guardrails' window still held when the upstream's connection dropped, or when
// a block rule stopped the answer, was generated (and billed by the provider) all the same. The shipped shape (SQLite
// store, the default pipeline, a live key with a budget and rate limits), one keyword block rule, and chat, Messages
// and Gemini clients in front of an OpenAI-protocol upstream that writes its frames at once or a few bytes at a time.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { startTestGateway, type TestGateway } from "./helpers/gateway.ts";
import { KEY, OTHER, policyConfig } from "./helpers/policy-config.ts";

const MODEL = "openai/gpt-4o-mini";
const RULES = { rules: [{ name: "nokw", type: "deny", on: ["output"], keywords: ["FORBIDDENWORD"], action: "block" }] };

type Speed = "fast" | "slow";
/** What the upstream sends before it drops the connection (no finish, no usage). */
let words: string[] = [];
let speed: Speed = "fast";

let fake: FakeOpenAI;
let gw: TestGateway;

const chunk = (delta: Record<string, unknown>) =>
  `data: ${JSON.stringify({ id: "chatcmpl-cut", object: "chat.completion.chunk", created: 1, model: "gpt-4o-mini", choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`;

/** The role chunk and `words`, in one write (fast) or four bytes at a time (slow), then the connection dropped. */
async function cutStream(res: import("node:http").ServerResponse): Promise<void> {
  res.writeHead(200, { "content-type": "text/event-stream" });
  const data = Buffer.from([chunk({ role: "assistant", content: "" }), ...words.map((w) => chunk({ content: w }))].join(""));
  const pieces = speed === "fast" ? [data] : Array.from({ length: Math.ceil(data.length / 4) }, (_, i) => data.subarray(i * 4, i * 4 + 4));
  for (const p of pieces) {
    await new Promise<void>((r) => res.write(p, () => r()));
    if (speed === "slow") await new Promise((r) => setImmediate(r));
  }
  res.socket?.destroy();
}

beforeAll(async () => {
  fake = await startFakeOpenAI();
  fake.hook = (req, res) => {
    if (!req.path.endsWith("/chat/completions") || !req.body?.stream) return false;
    void cutStream(res);
    return true;
  };
  gw = await startTestGateway({
    ...policyConfig(fake.baseUrl, {
      store: { kind: "sqlite", path: "./gateway.db" },
      acme: { budget: { usd: "10" }, rate_limits: { rpm: 10_000, tpm: 50_000_000 }, guardrails: RULES },
      other: { allow_models: ["openai/*"], budget: { usd: "10" }, rate_limits: { rpm: 10_000, tpm: 50_000_000 } },
    }),
    // Every request here is a cut stream, a failure of the endpoint: the circuit stays closed for all of them.
    routing: { max_attempts: 1, circuit_breaker: { consecutive_failures: 1000, min_requests: 1000 } },
  });
});
afterAll(async () => {
  await gw?.close();
  await fake?.close();
});

const CLIENTS = ["chat", "messages", "gemini"] as const;
type Client = (typeof CLIENTS)[number];

function request(client: Client): { path: string; body: Record<string, unknown> } {
  const messages = [{ role: "user", content: "hi" }];
  if (client === "chat") return { path: "/api/v1/chat/completions", body: { model: MODEL, stream: true, max_tokens: 50, messages } };
  if (client === "messages") return { path: "/api/v1/messages", body: { model: MODEL, stream: true, max_tokens: 50, messages } };
  return { path: `/api/v1beta/models/${MODEL}:streamGenerateContent?alt=sse`, body: { contents: [{ role: "user", parts: [{ text: "hi" }] }], generationConfig: { maxOutputTokens: 50 } } };
}

let n = 0;
/** One streamed request by `key` on `client`: its ledger record. */
async function billed(client: Client, key: string) {
  const requestId = `req-cutbill-${client}-${++n}`;
  const { path, body } = request(client);
  const res = await fetch(gw.url + path, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "anthropic-version": "2023-06-01", "content-type": "application/json", "x-request-id": requestId },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  await res.text().catch(() => "");
  let entry: Awaited<ReturnType<TestGateway["gateway"]["store"]["ledger"]>>[number] | undefined;
  for (let i = 0; i < 200 && !entry; i++) {
    entry = (await gw.gateway.store.ledger({})).find((e) => e.requestId === requestId);
    if (!entry) await new Promise((r) => setTimeout(r, 10));
  }
  expect(entry).toBeDefined();
  return entry!;
}

describe.each(CLIENTS)("a cut stream on a %s client, with an output rule, billed what the upstream generated", (client) => {
  it.each(["fast", "slow"] as const)("the upstream drops the connection after two words (%s): billed as without the rule", async (s) => {
    speed = s;
    words = ["Hello", " there"];
    const plain = await billed(client, OTHER);
    const guarded = await billed(client, KEY);
    expect(plain).toMatchObject({ outcome: "stream_error", estimated: true });
    expect(plain.outputTokens).toBeGreaterThanOrEqual(2); // a token a word at least
    expect(guarded).toMatchObject({ outcome: "stream_error", estimated: true, outputTokens: plain.outputTokens });
  });

  it.each(["fast", "slow"] as const)("the rule blocks the third word before any usage (%s): billed the three words generated", async (s) => {
    speed = s;
    words = ["Hello", " there", " FORBIDDENWORD"];
    // Without the rule the same words, then the drop: what the upstream generated up to there.
    const plain = await billed(client, OTHER);
    const guarded = await billed(client, KEY);
    expect(plain).toMatchObject({ outcome: "stream_error", estimated: true });
    expect(plain.outputTokens).toBeGreaterThanOrEqual(3);
    expect(guarded).toMatchObject({ outcome: "blocked", estimated: true, outputTokens: plain.outputTokens });
  });
});
