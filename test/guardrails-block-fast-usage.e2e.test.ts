// A block rule that stops a stream whose upstream wrote its whole answer at once: the upstream's usage (Anthropic's
// message_delta output_tokens, Gemini's last usageMetadata) came in the same read as the text the rule caught, so the
// ledger bills it, the same output and cost as the stream without the rule, not an estimate of the text before the
// match. A slow upstream still gets its refusal at once: the gateway never waits on it for data that has not come.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { IncomingMessage, ServerResponse } from "node:http";
import { keyEntry, ledgerRecordOf, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { listenLoopback, readRequest, type Loopback } from "./upstreams/http-fake.ts";

const GUARDED = testKey("blockfast-guarded");
const PLAIN = testKey("blockfast-plain");
const ANSWER = "Here it is: AKIAIOSFODNN7EXAMPLE and more text after the key to fill the window beyond sixty four chars ok.";
const WORDS = ANSWER.split(/(?<= )/);
const PRICES = { input: "0.000001", output: "0.000002" };

let up: Loopback;
let gw: TestGateway;
/** Slow mode: the upstream writes up to the key, then waits for this before the rest. */
let slow: { release: Promise<void> } | undefined;

const frame = (event: string | undefined, data: unknown) => `${event ? `event: ${event}\n` : ""}data: ${JSON.stringify(data)}\n\n`;

function anthropicFrames(model: string): string[] {
  return [
    frame("message_start", { type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 20, output_tokens: 1 } } }),
    frame("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }),
    ...WORDS.map((w) => frame("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: w } })),
    frame("content_block_stop", { type: "content_block_stop", index: 0 }),
    frame("message_delta", { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 30 } }),
    frame("message_stop", { type: "message_stop" }),
  ];
}

function geminiFrames(): string[] {
  // Google's running usage on each chunk, the answer's count on the last one.
  const chunk = (text: string, last: boolean) => frame(undefined, {
    candidates: [{ content: { role: "model", parts: [{ text }] }, index: 0, ...(last ? { finishReason: "STOP" } : {}) }],
    usageMetadata: last ? { promptTokenCount: 20, candidatesTokenCount: 30, totalTokenCount: 50 } : { promptTokenCount: 20, totalTokenCount: 20 },
    modelVersion: "gemini-2.5-flash",
  });
  return WORDS.map((w, i) => chunk(w, i === WORDS.length - 1));
}

async function answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { path, body } = await readRequest(req);
  const frames = path.includes(":streamGenerateContent") ? geminiFrames() : anthropicFrames(body.model);
  res.writeHead(200, { "content-type": "text/event-stream" });
  const s = slow;
  if (!s) return void res.end(frames.join(""));
  // Up to the key's word and a little after, then nothing until the test lets it go on.
  const cut = frames.findIndex((f) => f.includes("AKIA")) + 2;
  res.write(frames.slice(0, cut).join(""));
  await s.release;
  if (!res.destroyed) res.end(frames.slice(cut).join(""));
}

beforeAll(async () => {
  up = await listenLoopback((req, res) => void answer(req, res));
  const endpoints = (provider: string, model: string) => [{ provider, model, pricing: PRICES }];
  gw = await startTestGateway({
    providers: {
      claude: { protocol: "anthropic", base_url: up.origin, api_key: "sk-ant-fake" },
      gem: { protocol: "gemini", base_url: up.origin, api_key: "AIza-fake" },
    },
    models: {
      "anthropic/claude-x": { type: "language", context_window: 100_000, max_tokens: 1000, endpoints: endpoints("claude", "claude-x") },
      "google/gemini-x": { type: "language", context_window: 100_000, max_tokens: 1000, endpoints: endpoints("gem", "gemini-x") },
    },
    projects: {
      guarded: {
        keys: [keyEntry("g", GUARDED)],
        guardrails: { rules: [{ name: "no-secrets", detect: ["secret"], on: ["output"], action: "block" }] },
      },
      plain: { keys: [keyEntry("p", PLAIN)] },
    },
  });
});

afterAll(async () => {
  await gw?.close();
  await up?.close();
});

type Client = "chat" | "messages" | "gemini";

function request(client: Client, model: string): { path: string; body: Record<string, unknown> } {
  const messages = [{ role: "user", content: "SAYSECRET" }];
  if (client === "chat") return { path: "/api/v1/chat/completions", body: { model, stream: true, max_tokens: 1000, messages } };
  if (client === "messages") return { path: "/api/v1/messages", body: { model, stream: true, max_tokens: 1000, messages } };
  return { path: `/api/v1beta/models/${model}:streamGenerateContent?alt=sse`, body: { contents: [{ role: "user", parts: [{ text: "SAYSECRET" }] }] } };
}

/** One streamed request: what the client read, and its ledger record. */
async function streamed(client: Client, model: string, key: string) {
  const { path, body } = request(client, model);
  const res = await fetch(gw.url + path, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "anthropic-version": "2023-06-01", "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  const text = await res.text();
  return { text, entry: await ledgerRecordOf(gw, res.headers.get("x-request-id")) };
}

const PAIRS: [string, Client, string][] = [
  ["an Anthropic", "chat", "anthropic/claude-x"],
  ["an Anthropic", "messages", "anthropic/claude-x"],
  ["a Gemini", "gemini", "google/gemini-x"],
  ["a Gemini", "chat", "google/gemini-x"],
];

describe.each(PAIRS)("%s upstream that writes its whole stream at once, a %s client", (_, client, model) => {
  it("a block rule's refusal bills the upstream's reported usage, as the stream without the rule does", async () => {
    slow = undefined;
    const plain = await streamed(client, model, PLAIN);
    const guarded = await streamed(client, model, GUARDED);
    expect(plain.entry).toMatchObject({ outcome: "ok", inputTokens: 20, outputTokens: 30 });
    expect(guarded.text).not.toContain("AKIA");
    expect(guarded.entry).toMatchObject({ outcome: "blocked", inputTokens: 20, outputTokens: plain.entry.outputTokens, costUsd: plain.entry.costUsd, estimated: false });
  });
});

describe("a slow upstream stopped by a block rule", () => {
  it.each([["anthropic/claude-x", "messages"], ["google/gemini-x", "gemini"]] as const)("%s to a %s client: the refusal goes out while the upstream still holds the rest", async (model, client) => {
    let release!: () => void;
    slow = { release: new Promise<void>((r) => (release = r)) };
    try {
      // The upstream sends the rest only once it is released: a refusal that waited for it would never come.
      const { text, entry } = await streamed(client, model, GUARDED);
      expect(text).not.toContain("AKIA");
      expect(text).toContain("no-secrets");
      expect(entry.outcome).toBe("blocked");
      expect(entry.outputTokens).toBeLessThan(30);
    } finally {
      release();
      slow = undefined;
    }
  });
});
