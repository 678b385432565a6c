// Azure OpenAI's error answers (reference protocols-2 §4.4) as clients see them: a missing deployment or an api_version
// Azure does not serve is the gateway's configuration (502, and the model's next endpoint answers).
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { AZURE_API_VERSION, AZURE_KEY, startFakeAzure, type FakeAzure } from "./upstreams/azure.ts";

const KEY = testKey("azureerrors");
let azure: FakeAzure;
let gw: TestGateway;

beforeAll(async () => {
  azure = await startFakeAzure(["gpt-4o-mini"]);
  const provider = (apiVersion: string) => ({ protocol: "openai", flavor: "azure", base_url: azure.baseUrl, api_key: AZURE_KEY, api_version: apiVersion });
  gw = await startTestGateway({
    store: { kind: "memory" },
    routing: { backoff_ms: 1, circuit_breaker: { consecutive_failures: 1000, min_requests: 1000 } },
    providers: { azure: provider(AZURE_API_VERSION), azold: provider("2019-01-01") },
    models: {
      "azure/two-deployments": { endpoints: [{ provider: "azure", model: "missing" }, { provider: "azure", model: "gpt-4o-mini" }] },
      "azure/old-then-new": { endpoints: [{ provider: "azold", model: "gpt-4o-mini" }, { provider: "azure", model: "gpt-4o-mini" }] },
      "azure/missing": { endpoints: [{ provider: "azure", model: "missing" }] },
      "azure/gpt-4o-mini": { endpoints: [{ provider: "azure", model: "gpt-4o-mini" }] },
    },
    projects: { p: { keys: [keyEntry("k", KEY)] } },
  });
});

afterAll(async () => {
  await gw?.close();
  await azure?.close();
});

beforeEach(() => {
  azure.requests.length = 0;
});

const openai = () => new OpenAI({ apiKey: KEY, baseURL: gw.baseURL, maxRetries: 0 });
const deploymentsAsked = () => azure.requests.map((r) => new URL(r.path, "http://x").pathname.split("/")[3]);
const hi = [{ role: "user" as const, content: "hi" }];

describe("Azure 404s about the configured deployment or api_version", () => {
  it("DeploymentNotFound on the first endpoint: the next deployment answers", async () => {
    const r = await openai().chat.completions.create({ model: "azure/two-deployments", messages: hi });
    expect(r.choices[0]!.message.content).toBe("Azure gpt-4o-mini says hi");
    expect(deploymentsAsked()).toEqual(["missing", "gpt-4o-mini"]);
  });

  it("a wrong api_version (Azure's bare 'Resource not found'): the next endpoint answers", async () => {
    const r = await openai().chat.completions.create({ model: "azure/old-then-new", messages: hi });
    expect(r.choices[0]!.message.content).toBe("Azure gpt-4o-mini says hi");
    expect(azure.requests.map((q) => new URL(q.path, "http://x").searchParams.get("api-version"))).toEqual(["2019-01-01", AZURE_API_VERSION]);
  });

  it("no other endpoint: 502 UPSTREAM_ERROR naming the configuration, not the client's 400", async () => {
    const r = await postJson(`${gw.baseURL}/chat/completions`, { model: "azure/missing", messages: hi }, { authorization: `Bearer ${KEY}` });
    expect(r.status).toBe(502);
    expect(r.json.error).toMatchObject({ code: "UPSTREAM_ERROR", details: { reason: "upstream_not_found", upstream_status: 404, upstream_error: { code: "DeploymentNotFound" } } });
    expect(r.json.error.message).toContain("gateway.yaml");
  });
});
