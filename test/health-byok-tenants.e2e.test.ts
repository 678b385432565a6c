// Circuit breakers across tenants: a project's own provider key (BYOK) failing must not take the endpoint away from
// the projects using the gateway's key, nor the gateway's failing key from a project with a key of its own.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startTestGateway, testKey, keyEntry, postJson, type TestGateway } from "./helpers/gateway.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";

const SHARED = testKey("sharedkey"); // project on the gateway's key
const BROKE = testKey("brokekey"); // project whose own OpenAI key is rate limited
const NOCREDIT = testKey("nocreditkey"); // project whose own OpenAI account is out of credit
const OWNURL = testKey("ownurl"); // project with its own key and base_url (a healthy upstream of its own)

let openai: FakeOpenAI;
let own: FakeOpenAI;
let gw: TestGateway;
let gatewayKeyDown = false;

const chat = (key: string) =>
  postJson(`${gw.baseURL}/chat/completions`, { model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "hi" }] }, { authorization: `Bearer ${key}` });

const circuitState = async () => {
  const text = await (await fetch(gw.metricsUrl!)).text();
  return text.split("\n").filter((l) => l.startsWith("gateway_circuit_state{") && l.includes('provider="openai"'));
};

beforeAll(async () => {
  openai = await startFakeOpenAI({ text: "shared answers" });
  own = await startFakeOpenAI({ text: "own upstream answers" });
  openai.hook = (req, res) => {
    if (req.headers.authorization === "Bearer sk-exhausted") {
      res.writeHead(429, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: "Rate limit reached for requests", type: "requests", param: null, code: "rate_limit_exceeded" } }));
      return true;
    }
    if (req.headers.authorization === "Bearer sk-nocredit") {
      res.writeHead(429, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: "You exceeded your current quota", type: "insufficient_quota", param: null, code: "insufficient_quota" } }));
      return true;
    }
    if (gatewayKeyDown) {
      res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: "boom", type: "server_error", param: null, code: null } }));
      return true;
    }
    return false;
  };
  gw = await startTestGateway({
    store: { kind: "memory" },
    routing: { backoff_ms: 1, circuit_breaker: { consecutive_failures: 3, cooldown_ms: 30_000 } },
    providers: { openai: { protocol: "openai", base_url: openai.baseUrl, api_key: "sk-fake-upstream" } },
    models: { "openai/gpt-4o-mini": { endpoints: [{ provider: "openai", model: "gpt-4o-mini" }] } },
    projects: {
      shared: { keys: [keyEntry("k1", SHARED)] },
      broke: { keys: [keyEntry("k5", BROKE)], providers: { openai: { api_key: "sk-exhausted" } } },
      nocredit: { keys: [keyEntry("k7", NOCREDIT)], providers: { openai: { api_key: "sk-nocredit" } } },
      ownurl: { keys: [keyEntry("k6", OWNURL)], providers: { openai: { api_key: "sk-fake-upstream", base_url: own.baseUrl } } },
    },
  });
});

afterAll(async () => {
  await gw?.close();
  await openai?.close();
  await own?.close();
});

beforeEach(() => {
  openai.requests.length = 0;
  own.requests.length = 0;
});

describe("a project's own key and the shared circuit", () => {
  it("a project whose own key is rate limited opens only its own circuit; other projects keep being served", async () => {
    for (let i = 0; i < 3; i++) expect((await chat(BROKE)).status).toBe(502);
    const brokeCalls = openai.requests.length;
    expect(brokeCalls).toBeGreaterThanOrEqual(3);

    const r = await chat(SHARED);
    expect(r.status).toBe(200);
    expect(r.json.choices[0].message.content).toBe("shared answers");
    expect(await circuitState()).toEqual(['gateway_circuit_state{model="openai/gpt-4o-mini",provider="openai"} 0']);
    // Nor do its failures lower the uptime every tenant sees in the catalog (and routing sorts by): only the
    // gateway's own key's answer counts there.
    const listed = await (await fetch(`${gw.baseURL}/models/openai/gpt-4o-mini/endpoints`, { headers: { authorization: `Bearer ${SHARED}` } })).json() as any;
    expect(listed.data.endpoints[0].uptime_last_1d).toBe(1);

    // The broke project still has breaker protection: its circuit is open, so its key is not sent again.
    const again = await chat(BROKE);
    expect(again.status).toBe(502);
    expect(again.json.error.message).toMatch(/circuit open/);
    expect(openai.requests.filter((q) => q.headers.authorization === "Bearer sk-exhausted")).toHaveLength(brokeCalls);
    // The catalog shows each caller the circuit its own requests meet.
    const status = async (key: string) => ((await (await fetch(`${gw.baseURL}/models/openai/gpt-4o-mini/endpoints`, { headers: { authorization: `Bearer ${key}` } })).json()) as any).data.endpoints[0].status;
    expect(await status(BROKE)).toBe("open");
    expect(await status(SHARED)).toBe("closed");
  });

  it("a project whose own account is out of credit (429 insufficient_quota) gets one attempt per request, told not to retry; no circuit opens", async () => {
    for (let i = 0; i < 4; i++) {
      const r = await chat(NOCREDIT);
      expect(r.status).toBe(502);
      expect(r.headers.get("x-should-retry")).toBe("false");
      expect(r.json.error.message).toContain("You exceeded your current quota");
    }
    expect(openai.requests.filter((q) => q.headers.authorization === "Bearer sk-nocredit")).toHaveLength(4);
    const listed = await (await fetch(`${gw.baseURL}/models/openai/gpt-4o-mini/endpoints`, { headers: { authorization: `Bearer ${NOCREDIT}` } })).json() as any;
    expect(listed.data.endpoints[0].status).toBe("closed");
  });

  it("the gateway's failing key opens the shared circuit, which does not keep a project from its own key", async () => {
    gatewayKeyDown = true;
    try {
      for (let i = 0; i < 2; i++) expect((await chat(SHARED)).status).toBe(502);
      const open = await chat(SHARED);
      expect(open.json.error.message).toMatch(/circuit open/);
      expect(await circuitState()).toEqual(['gateway_circuit_state{model="openai/gpt-4o-mini",provider="openai"} 2']);

      const r = await chat(OWNURL);
      expect(r.status).toBe(200);
      expect(r.json.choices[0].message.content).toBe("own upstream answers");
      expect(own.requests).toHaveLength(1);
    } finally {
      gatewayKeyDown = false;
    }
  });
});
