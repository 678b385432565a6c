// With the project's own key (BYOK), an answer past server.upstream_limits ended the request with a 502, though the
// docs say the model's next endpoint is tried, as it is on the gateway's own keys: an oversized answer is no refusal
// of the project's key (only those are final for BYOK). Now the next endpoint serves, and the oversized endpoint is
// still not asked again; a refused project key stays final.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";

const HOUSE = testKey("house");
const OWN = testKey("ownkey");
const LIMIT = 4096;

let big: FakeOpenAI;
let ok: FakeOpenAI;
let gw: TestGateway;

/** What each request to `big` carried as its key: the project's own key, or the gateway's. */
const bigKeys = () => big.requests.filter((r) => r.path === "/v1/chat/completions").map((r) => r.headers.authorization);

beforeAll(async () => {
  big = await startFakeOpenAI();
  // Every chat answer of `big` is twice the bound (a JSON answer, or a stream's first event); its key is not checked.
  big.hook = (rec, res) => {
    if (rec.path !== "/v1/chat/completions") return false;
    const content = "x".repeat(2 * LIMIT);
    if (rec.body.stream) {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end(`data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: { role: "assistant", content }, finish_reason: null }] })}\n\n`);
    } else {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ id: "c1", object: "chat.completion", created: 1, model: "m", choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }], usage: { prompt_tokens: 5, completion_tokens: 9, total_tokens: 14 } }));
    }
    return true;
  };
  ok = await startFakeOpenAI({ text: "ok answers" });
  gw = await startTestGateway({
    server: { upstream_limits: { answer_bytes: LIMIT, event_chars: LIMIT } },
    routing: { backoff_ms: 1 },
    providers: {
      big: { protocol: "openai", base_url: big.baseUrl, api_key: "sk-fake-upstream" },
      ok: { protocol: "openai", base_url: ok.baseUrl, api_key: "sk-fake-upstream" },
    },
    models: { "test/big-then-ok": { endpoints: [{ provider: "big", model: "m" }, { provider: "ok", model: "m" }] } },
    projects: {
      house: { keys: [keyEntry("h", HOUSE)] },
      own: { keys: [keyEntry("o", OWN)], providers: { big: { api_key: "sk-project-own" } } },
    },
  });
}, 30_000);

afterAll(async () => {
  await gw?.close();
  await big?.close();
  await ok?.close();
});

const ask = (key: string, stream: boolean) =>
  postJson(`${gw.baseURL}/chat/completions`, { model: "test/big-then-ok", stream, messages: [{ role: "user", content: "Write a lot" }] }, { authorization: `Bearer ${key}` });

describe("an answer past server.upstream_limits on the project's own key", () => {
  it("moves to the model's next endpoint, as on the gateway's keys, asking the oversized one once", async () => {
    for (const stream of [false, true]) {
      for (const [key, own] of [[HOUSE, "Bearer sk-fake-upstream"], [OWN, "Bearer sk-project-own"]] as const) {
        const before = bigKeys().length, okBefore = ok.requests.length;
        const r = await ask(key, stream);
        expect(r.status, `${key === OWN ? "own key" : "gateway key"}, stream ${stream}: ${r.text.slice(0, 300)}`).toBe(200);
        expect(r.text).toMatch(stream ? /"content":" answers"/ : /"content":"ok answers"/);
        expect(bigKeys().slice(before), "the oversized endpoint, asked once with the key of its project").toEqual([own]);
        expect(ok.requests.length - okBefore, "the next endpoint, asked once").toBe(1);
      }
    }
  });

  it("still ends the request when the upstream refuses the project's own key", async () => {
    const okBefore = ok.requests.length;
    big.hook = undefined; // big answers normally now, and refuses any key but the gateway's with a 401
    const r = await ask(OWN, false);
    expect(r.status).toBe(502);
    expect(r.json.error.details.attempts).toEqual([expect.objectContaining({ provider: "big" })]);
    expect(ok.requests.length - okBefore, "the gateway's own keys are not used for the project").toBe(0);
  });
});
