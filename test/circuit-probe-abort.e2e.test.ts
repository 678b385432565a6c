// The half-open probe of an open circuit whose client leaves mid-stream says nothing about the endpoint: its slot is
// freed at once, so the next request is the new probe — also when a plugin (idempotency's recording) sits between
// the stream and the client, where the client's leaving reaches the upstream read as an abort rather than a return().
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeOpenAI } from "./upstreams/openai.ts";
import { startOneUpstreamGateway } from "./helpers/one-upstream-gateway.ts";
import { testKey, type TestGateway } from "./helpers/gateway.ts";

const KEY = testKey("cbprobeabort");
const COOLDOWN_MS = 1500;
let up: FakeOpenAI;
let gw: TestGateway;
let close: () => Promise<void>;

const chat = (extra: Record<string, unknown> = {}, headers: Record<string, string> = {}, signal?: AbortSignal) =>
  fetch(`${gw.baseURL}/chat/completions`, {
    method: "POST", signal,
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json", ...headers },
    body: JSON.stringify({ model: "t/m", messages: [{ role: "user", content: "hi" }], ...extra }),
  });

beforeAll(async () => {
  ({ up, gw, close } = await startOneUpstreamGateway(KEY, { backoff_ms: 1, circuit_breaker: { consecutive_failures: 1, cooldown_ms: COOLDOWN_MS } }));
});
afterAll(() => close?.());

describe("a half-open probe whose client leaves", () => {
  for (const [name, headers] of [["plain", {}], ["with an idempotency key", { "x-mg-idempotency-key": crypto.randomUUID() }]] as const) {
    it(`${name}: the next request is let through at once, and served`, async () => {
      up.failures.length = 0;
      up.failures.push({ kind: "status", status: 500 });
      expect((await chat()).status).toBe(502); // the circuit opens
      await new Promise((r) => setTimeout(r, COOLDOWN_MS + 100));
      up.failures.push({ kind: "slow", chunkDelayMs: 400 });
      const left = new AbortController();
      const probe = chat({ stream: true }, headers, left.signal).then((r) => r.text()).catch((e) => e);
      await new Promise((r) => setTimeout(r, 700)); // mid-stream
      left.abort();
      await probe;
      await new Promise((r) => setTimeout(r, 100));
      const next = await chat();
      expect(next.status).toBe(200);
    });
  }
});
