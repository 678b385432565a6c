// The shipped gateway.yaml and catalog with Vertex switched on the way an operator does it: GOOGLE_APPLICATION_CREDENTIALS
// names a service-account key (project from the key), VERTEX_LOCATION the location. Only the host is pointed at the
// fake (base_url). Full default pipeline on SQLite. Without the variable the provider stays off.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { makeServiceAccount, startFakeTokenEndpoint, type FakeTokenEndpoint } from "./upstreams/vertex-auth.ts";
import { startFakeVertex, type FakeVertex } from "./upstreams/vertex.ts";
import { startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { providerEnv, shippedConfig, SHIPPED_KEY } from "./helpers/shipped-config.ts";
import { startTestGateway, type TestGateway } from "./helpers/gateway.ts";

let tokens: FakeTokenEndpoint;
let vertex: FakeVertex;
let anthropicFake: FakeAnthropic;
let openaiFake: FakeOpenAI;
let gw: TestGateway;
let off: TestGateway;

beforeAll(async () => {
  tokens = await startFakeTokenEndpoint();
  const sa = makeServiceAccount(tokens.tokenUri, { projectId: "shipped-project" });
  tokens.trust(sa);
  vertex = await startFakeVertex(tokens, { project: "shipped-project", location: "europe-west1" });
  anthropicFake = await startFakeAnthropic();
  openaiFake = await startFakeOpenAI();
  const config = shippedConfig({ openai: openaiFake.baseUrl, anthropic: anthropicFake.baseUrl });
  expect(config.providers.vertex.protocol).toBe("vertex");
  const env = providerEnv(config);
  const on = structuredClone(config);
  on.providers.vertex.base_url = vertex.baseUrl;
  gw = await startTestGateway(on, { env: { ...env, GOOGLE_APPLICATION_CREDENTIALS: sa.file, VERTEX_LOCATION: "europe-west1" } });
  off = await startTestGateway(config, { env });
});

afterAll(async () => {
  await gw?.close();
  await off?.close();
  await vertex?.close();
  await anthropicFake?.close();
  await openaiFake?.close();
  await tokens?.close();
});

describe("shipped config with Vertex on", () => {
  it("a Gemini model whose first-party provider is off is served by Vertex (openai client, stream)", async () => {
    const openai = new OpenAI({ apiKey: SHIPPED_KEY, baseURL: gw.baseURL, maxRetries: 0 });
    const stream = await openai.chat.completions.create({ model: "google/gemini-2.5-pro", messages: [{ role: "user", content: "Hi" }], stream: true });
    let text = "";
    for await (const c of stream) text += c.choices[0]?.delta.content ?? "";
    expect(text).toBe("Hello from the fake Gemini upstream.");
    expect(vertex.requests.at(-1)!.path).toBe("/v1/projects/shipped-project/locations/europe-west1/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse");
  });

  it("Claude goes to Anthropic first (catalog order) and to Vertex when asked, with the catalog's Vertex model id", async () => {
    const anthropic = new Anthropic({ apiKey: SHIPPED_KEY, baseURL: gw.url + "/api", maxRetries: 0 });
    const seen = vertex.requests.length;
    await anthropic.messages.create({ model: "anthropic/claude-haiku-4.5", max_tokens: 50, messages: [{ role: "user", content: "Hi" }] });
    expect(vertex.requests.length).toBe(seen);
    expect(anthropicFake.requests.at(-1)!.body.model).toBe("claude-haiku-4-5-20251001");
    const msg = await anthropic.messages.create({ model: "anthropic/claude-haiku-4.5", max_tokens: 50, messages: [{ role: "user", content: "Hi" }], providerOptions: { gateway: { order: ["vertex"] } } } as never);
    expect(msg.content[0]).toEqual(expect.objectContaining({ text: "Hello from the fake Anthropic upstream." }));
    expect(vertex.requests.at(-1)!.path).toBe("/v1/projects/shipped-project/locations/europe-west1/publishers/anthropic/models/claude-haiku-4-5@20251001:rawPredict");
  });

  it("lists Vertex among the model's endpoints only when its credentials are set", async () => {
    const providers = async (g: TestGateway) => {
      const r: any = await (await fetch(`${g.baseURL}/models/anthropic/claude-sonnet-4.5/endpoints`, { headers: { authorization: `Bearer ${SHIPPED_KEY}` } })).json();
      return (r.data?.endpoints ?? r.endpoints ?? []).map((e: any) => e.provider ?? e.provider_name);
    };
    expect(await providers(gw)).toContain("vertex");
    expect(await providers(off)).not.toContain("vertex");
  });
});
