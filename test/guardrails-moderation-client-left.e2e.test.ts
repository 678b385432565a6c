// A client that leaves a stream under output moderation is not moderated after it left: nothing more reaches it, so
// there is no answer to judge, no moderation call to bill, and no refusal to record (its request is a cancelled one,
// not a guardrail block), on every client protocol.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { keyEntry, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { until } from "./helpers/until.ts";

const KEY = testKey("moderation-client-left");

let chat: FakeOpenAI;
let mod: FakeOpenAI;
let gw: TestGateway;

beforeAll(async () => {
  chat = await startFakeOpenAI();
  chat.textFor = () => Array.from({ length: 60 }, (_, i) => `word${i}`).join(" ");
  chat.pace = () => 20; // the client leaves after its first chunk, long before the answer ends
  mod = await startFakeOpenAI();
  mod.hook = (req, res) => {
    if (req.path !== "/v1/moderations") return false;
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ id: "modr-1", model: "omni-moderation-latest", results: [{ flagged: false, categories: {}, category_scores: {} }] }));
    return true;
  };
  gw = await startTestGateway({
    providers: {
      chat: { protocol: "openai", base_url: chat.baseUrl, api_key: "sk-fake-upstream" },
      mod: { protocol: "openai", base_url: mod.baseUrl, api_key: "sk-fake-upstream" },
    },
    models: { "openai/gpt-4o-mini": { type: "language", endpoints: [{ provider: "chat", model: "gpt-4o-mini", pricing: { input: "0.000001", output: "0.000002" } }] } },
    projects: { acme: { keys: [keyEntry("k", KEY)], guardrails: { moderation: { provider: "mod", on: ["output"], on_error: "fail_closed" } } } },
  });
});
afterAll(async () => {
  await gw?.close();
  await chat?.close();
  await mod?.close();
});

const REQUESTS = {
  chat: ["/api/v1/chat/completions", { messages: [{ role: "user", content: "count" }] }],
  messages: ["/api/v1/messages", { max_tokens: 500, messages: [{ role: "user", content: "count" }] }],
  responses: ["/api/v1/responses", { input: "count", store: false }],
  "stored responses": ["/api/v1/responses", { input: "count" }],
} as const;

describe.each(Object.keys(REQUESTS) as (keyof typeof REQUESTS)[])("a %s stream under output moderation the client leaves", (kind) => {
  it("is recorded as cancelled, with no moderation call and no guardrail block", async () => {
    const [path, body] = REQUESTS[kind];
    const leave = new AbortController();
    const res = await fetch(`${gw.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${KEY}`, "anthropic-version": "2023-06-01" },
      body: JSON.stringify({ model: "openai/gpt-4o-mini", stream: true, ...body }),
      signal: leave.signal,
    });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    await reader.read();
    const requestId = res.headers.get("x-request-id") ?? res.headers.get("request-id");
    leave.abort();
    const mine = async () => (await gw.gateway.store.ledger({ project: "acme" })).filter((e) => e.requestId === requestId);
    // The request's own record is written once it finished: a moderation after the client left comes before it.
    const own = await until("the request's record", async () => (await mine()).find((e) => e.endpoint !== "moderation"));
    expect(own.outcome).toBe("aborted");
    expect(own.guardrail ?? "").not.toContain("block");
    expect((await mine()).filter((e) => e.endpoint === "moderation")).toEqual([]);
  });
});
