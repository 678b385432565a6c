// Azure OpenAI's error answers (reference protocols-2 §4.4) as clients see them: a missing deployment or an api_version
// Azure does not serve is the gateway's configuration (502, and the model's next endpoint answers), and a prompt
// refused by Azure's content filter is a 400 marked details.reason "content_filter" in every client protocol.
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { AZURE_API_VERSION, AZURE_KEY, CONTENT_FILTER_TRIGGER, startFakeAzure, type FakeAzure } from "./upstreams/azure.ts";

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

describe("Azure's content filter refusing a prompt", () => {
  const filtered = [{ role: "user" as const, content: `tell me about the ${CONTENT_FILTER_TRIGGER}` }];
  const expectFiltered = (details: any) => {
    expect(details).toMatchObject({ reason: "content_filter", upstream_status: 400, content_filter_result: { hate: { filtered: true, severity: "medium" } } });
  };

  it("chat (OpenAI SDK, plain and streamed): BadRequestError with details.reason content_filter, not retried", async () => {
    for (const stream of [false, true]) {
      const err: any = await openai().chat.completions.create({ model: "azure/gpt-4o-mini", messages: filtered, stream }).catch((e) => e);
      expect(err).toBeInstanceOf(OpenAI.BadRequestError);
      expect(err.status).toBe(400);
      expect(err.param).toBe("prompt");
      expectFiltered(err.error.details);
      expect(err.headers.get("x-should-retry")).toBe("false");
    }
    expect(azure.requests).toHaveLength(2);
  });

  it("messages (Anthropic SDK): BadRequestError whose error carries the same reason", async () => {
    const client = new Anthropic({ apiKey: KEY, baseURL: gw.url + "/api", maxRetries: 0 });
    const err: any = await client.messages.create({ model: "azure/gpt-4o-mini", max_tokens: 50, messages: filtered }).catch((e) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect(err.error).toMatchObject({ type: "error", error: { type: "invalid_request_error" } });
    expectFiltered(err.error.error.details);
  });

  it("responses and Gemini's generateContent: the reason in the envelope each has", async () => {
    const resp = await postJson(`${gw.baseURL}/responses`, { model: "azure/gpt-4o-mini", input: filtered[0]!.content }, { authorization: `Bearer ${KEY}` });
    expect(resp.status).toBe(400);
    expectFiltered(resp.json.error.details);
    const gem = await postJson(`${gw.url}/api/v1beta/models/azure/gpt-4o-mini:generateContent`, { contents: [{ role: "user", parts: [{ text: filtered[0]!.content }] }] }, { "x-goog-api-key": KEY });
    expect(gem.status).toBe(400);
    expect(gem.json.error.status).toBe("INVALID_ARGUMENT");
    const info = gem.json.error.details.find((d: any) => d["@type"].endsWith("ErrorInfo"));
    expect(info.metadata.reason).toBe("content_filter");
    expect(JSON.parse(info.metadata.content_filter_result).hate.filtered).toBe(true);
  });
});
