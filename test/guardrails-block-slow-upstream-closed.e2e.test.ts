// A block rule that stops a stream whose upstream has sent the secret and then holds its next chunk: the gateway
// closes the upstream's connection at once (a provider keeps generating, and billing, while it is open), not when
// that chunk comes or the provider's timeout passes; and that cut is the gateway's own doing, so it counts nothing
// against the endpoint's circuit breaker: the next request is served as usual.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { IncomingMessage, ServerResponse } from "node:http";
import { keyEntry, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { listenLoopback, readRequest, type Loopback } from "./upstreams/http-fake.ts";

const KEY = testKey("blockslowclose");
const SECRET_ANSWER = "Here it is: AKIAIOSFODNN7EXAMPLE and more text after the key to fill the window beyond sixty four chars ok.";
const PLAIN_ANSWER = "Nothing secret in this answer at all.";
/** How long the upstream holds the rest of a secret answer: far past the test's own timeout. */
const HOLD_MS = 30_000;

let up: Loopback;
let gw: TestGateway;
/** Resolved when the upstream connection of the latest held answer closes. */
let heldClosed: Promise<void> = Promise.resolve();
const held = new Set<NodeJS.Timeout>();
let requests = 0;

const frame = (event: string | undefined, data: unknown) => `${event ? `event: ${event}\n` : ""}data: ${JSON.stringify(data)}\n\n`;
const words = (text: string) => text.split(/(?<= )/);

/** An Anthropic stream of `text`: the frames up to its last word, and the rest. */
function anthropicFrames(model: string, text: string): [string[], string[]] {
  return [[
    frame("message_start", { type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 20, output_tokens: 1 } } }),
    frame("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }),
    ...words(text).map((w) => frame("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: w } })),
  ], [
    frame("content_block_stop", { type: "content_block_stop", index: 0 }),
    frame("message_delta", { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 30 } }),
    frame("message_stop", { type: "message_stop" }),
  ]];
}

/** An OpenAI chat stream of `text`: the chunks up to its last word, and the rest. */
function chatFrames(model: string, text: string): [string[], string[]] {
  const chunk = (delta: object, finish: string | null) => frame(undefined, {
    id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model, choices: [{ index: 0, delta, finish_reason: finish }],
  });
  return [
    [chunk({ role: "assistant", content: "" }, null), ...words(text).map((w) => chunk({ content: w }, null))],
    [chunk({}, "stop"), frame(undefined, { id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model, choices: [], usage: { prompt_tokens: 20, completion_tokens: 30, total_tokens: 50 } }), "data: [DONE]\n\n"],
  ];
}

async function answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { path, body } = await readRequest(req);
  requests++;
  const secret = JSON.stringify(body.messages).includes("SAYSECRET");
  const text = secret ? SECRET_ANSWER : PLAIN_ANSWER;
  const [head, rest] = path.endsWith("/messages") ? anthropicFrames(body.model, text) : chatFrames(body.model, text);
  res.writeHead(200, { "content-type": "text/event-stream" });
  if (!secret) return void res.end([...head, ...rest].join(""));
  // The whole text with the key, then nothing more until HOLD_MS later.
  heldClosed = new Promise<void>((resolve) => req.socket.once("close", () => resolve()));
  res.write(head.join(""));
  const timer = setTimeout(() => {
    held.delete(timer);
    if (!res.destroyed) res.end(rest.join(""));
  }, HOLD_MS);
  held.add(timer);
  req.socket.once("close", () => {
    clearTimeout(timer);
    held.delete(timer);
  });
}

beforeAll(async () => {
  up = await listenLoopback((req, res) => void answer(req, res));
  gw = await startTestGateway({
    store: { kind: "memory" },
    // One failure opens the circuit, for longer than the test runs: a cut counted against the endpoint would show.
    routing: { backoff_ms: 1, circuit_breaker: { consecutive_failures: 1, cooldown_ms: 600_000 } },
    providers: {
      claude: { protocol: "anthropic", base_url: up.origin, api_key: "sk-ant-fake" },
      oai: { protocol: "openai", base_url: up.origin, api_key: "sk-fake" },
    },
    models: {
      "anthropic/claude-x": { type: "language", context_window: 100_000, max_tokens: 1000, endpoints: [{ provider: "claude", model: "claude-x" }] },
      "openai/gpt-x": { type: "language", context_window: 100_000, max_tokens: 1000, endpoints: [{ provider: "oai", model: "gpt-x" }] },
    },
    projects: {
      guarded: {
        keys: [keyEntry("g", KEY)],
        guardrails: { rules: [{ name: "no-secrets", detect: ["secret"], on: ["output"], action: "block" }] },
      },
    },
  });
});

afterAll(async () => {
  for (const t of held) clearTimeout(t);
  await up?.close(); // first: a connection the gateway left open would hold its close
  await gw?.close();
});

async function streamed(client: "messages" | "chat", model: string, prompt: string) {
  const path = client === "messages" ? "/api/v1/messages" : "/api/v1/chat/completions";
  const res = await fetch(gw.url + path, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "anthropic-version": "2023-06-01", "content-type": "application/json" },
    body: JSON.stringify({ model, stream: true, max_tokens: 1000, messages: [{ role: "user", content: prompt }] }),
  });
  return { status: res.status, text: await res.text() };
}

describe.each([
  ["an Anthropic", "messages", "anthropic/claude-x"],
  ["an OpenAI chat", "chat", "openai/gpt-x"],
] as const)("%s upstream holding its next chunk after the secret, a block rule", (_, client, model) => {
  it("closes the upstream's connection at once, and the endpoint serves the next request", { timeout: 15_000 }, async () => {
    const before = requests;
    const refused = await streamed(client, model, "SAYSECRET");
    expect(refused.status).toBe(200);
    expect(refused.text).not.toContain("AKIA");
    expect(refused.text).toContain("no-secrets");
    // Held for HOLD_MS: closed within the test's timeout only if the gateway closed it.
    await heldClosed;
    // The cut was the gateway's: no failure on the endpoint (one would have opened its circuit).
    const next = await streamed(client, model, "hello");
    expect(next.status).toBe(200);
    expect(next.text).toContain("Nothing secret");
    expect(requests).toBe(before + 2);
  });
});
