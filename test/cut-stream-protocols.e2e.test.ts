// One upstream generation cut short (the upstream drops the connection after a few words, no usage sent), asked for
// through chat, Messages and Responses: each client protocol's ledger record bills the same estimated output. The
// Messages and Responses streams add framing events (message_start, content_block_start, response.created,
// output_item.added, …) that carry no generated text and must not count toward the one-token-per-content-event floor.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keyEntry, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";

const KEY = testKey("cutprotocols");
const MODEL = "test/cut";
const WORDS = ["alpha", " beta", " gamma", " delta", " omega", " zeta", " eta", " theta"];
/** Frames the fake writes before it dies: the role chunk, then five words. */
const SENT_WORDS = 5;

let fake: FakeOpenAI;
let gw: TestGateway;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  fake.piecesFor = () => WORDS;
  gw = await startTestGateway({
    store: { kind: "memory" },
    routing: { max_attempts: 1 },
    providers: { up: { protocol: "openai", base_url: fake.baseUrl, api_key: "sk-fake-upstream" } },
    models: { [MODEL]: { type: "language", context_window: 8000, max_tokens: 1000, endpoints: [{ provider: "up", model: "m", pricing: { input: "0.000001", output: "0.000002" } }] } },
    projects: { p: { keys: [keyEntry("k", KEY)] } },
  });
});
afterAll(async () => {
  await gw?.close();
  await fake?.close();
});

async function cut(path: string, body: Record<string, unknown>, requestId: string) {
  fake.failures.push({ kind: "die-mid-stream", afterChunks: 1 + SENT_WORDS });
  const res = await fetch(`${gw.baseURL}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "anthropic-version": "2023-06-01", "content-type": "application/json", "x-request-id": requestId },
    body: JSON.stringify({ model: MODEL, stream: true, ...body }),
  });
  expect(res.status).toBe(200);
  const text = await res.text();
  for (const w of WORDS.slice(0, SENT_WORDS)) expect(text).toContain(w.trim());
  const [e] = (await gw.gateway.store.ledger({})).filter((x) => x.requestId === requestId);
  expect(e).toMatchObject({ outcome: "stream_error", estimated: true });
  return e!;
}

describe("a stream the upstream cuts, billed per client protocol", () => {
  it("bills the words relayed, the same on chat, Messages and Responses", async () => {
    const chat = await cut("/chat/completions", { messages: [{ role: "user", content: "hi" }], max_tokens: 50 }, "req-cut-chat");
    const messages = await cut("/messages", { messages: [{ role: "user", content: "hi" }], max_tokens: 50 }, "req-cut-messages");
    const responses = await cut("/responses", { input: "hi", max_output_tokens: 50 }, "req-cut-responses");
    // One token a word (the estimate counts a short word as one), whatever framing each protocol wraps them in.
    expect([chat.outputTokens, messages.outputTokens, responses.outputTokens]).toEqual([SENT_WORDS, SENT_WORDS, SENT_WORDS]);
  });
});
