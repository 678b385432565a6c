import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, postJson, type TestGateway } from "../../test/helpers/gateway.ts";
import { startFakeOpenAI, type FakeOpenAI } from "../../test/upstreams/openai.ts";
import { auth, chat, OTHER, policyConfig } from "../../test/helpers/policy-config.ts";
import { compileAllowlist } from "../../core/config/glob.ts";

describe("allow_models patterns", () => {
  it("match exact ids and globs; absent means every model, empty means none", () => {
    const m = compileAllowlist(["openai/gpt-4o", "anthropic/*", "*-mini"]);
    expect(["openai/gpt-4o", "anthropic/claude-x", "meta/llama-mini"].map(m)).toEqual([true, true, true]);
    expect(["openai/gpt-4o-2", "openai/gpt-4", "xanthropic/a"].map(m)).toEqual([false, false, false]);
    expect(compileAllowlist(undefined)("x/y")).toBe(true);
    expect(compileAllowlist([])("x/y")).toBe(false);
    expect(compileAllowlist(["a.b/c"])("aXb/c")).toBe(false); // dots are literal
  });
});

describe("allowlist plugin", () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  beforeAll(async () => {
    fake = await startFakeOpenAI();
    gw = await startTestGateway(policyConfig(fake.baseUrl));
  });
  afterAll(async () => {
    await gw?.close();
    await fake?.close();
  });
  const url = () => `${gw.baseURL}/chat/completions`;

  it("lets an allowed model through", async () => {
    const r = await postJson(url(), chat(), auth());
    expect(r.status).toBe(200);
  });

  it("403 MODEL_NOT_ALLOWED for a model outside the project's allowlist, before any upstream call", async () => {
    const before = fake.requests.length;
    const r = await postJson(url(), chat("anthropic/claude-x"), auth());
    expect(r.status).toBe(403);
    expect(r.json.error).toMatchObject({ code: "MODEL_NOT_ALLOWED", param: "model", details: { model: "anthropic/claude-x", project: "acme" } });
    expect(fake.requests.length).toBe(before);
  });

  it("checks every fallback model too, naming the offending entry", async () => {
    const r = await postJson(url(), chat("openai/gpt-4o-mini", { providerOptions: { gateway: { models: ["openai/gpt-4o", "anthropic/claude-x"] } } }), auth());
    expect(r.status).toBe(403);
    expect(r.json.error.details.field).toBe("providerOptions.gateway.models[1]");
  });

  it("an embedding model on chat completions is a 400 naming `model`, never an upstream error", async () => {
    const before = fake.requests.length;
    const r = await postJson(url(), chat("openai/text-embedding-3-small"), auth());
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({ code: "INVALID_REQUEST", param: "model", details: { type: "embedding", expected: "language" } });
    expect(fake.requests.length).toBe(before);
  });

  it("a project without allow_models may use every model", async () => {
    expect((await postJson(url(), chat("anthropic/claude-x"), auth(OTHER))).status).toBe(200);
  });

  it("an unknown model id with a line break is 404 MODEL_NOT_FOUND under a glob that covers it, not 403", async () => {
    const before = fake.requests.length;
    const r = await postJson(url(), chat("openai/gpt-4o\r\nX-Injected: 1"), auth());
    expect(r.status).toBe(404);
    expect(r.json.error.code).toBe("MODEL_NOT_FOUND");
    expect(fake.requests.length).toBe(before);
  });
});

describe("allow_models: [\"*\"]", () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  beforeAll(async () => {
    fake = await startFakeOpenAI();
    gw = await startTestGateway(policyConfig(fake.baseUrl, { other: { allow_models: ["*"] } }));
  });
  afterAll(async () => {
    await gw?.close();
    await fake?.close();
  });

  it("allows every model; an id no model has, CR/LF in it or not, is 404 MODEL_NOT_FOUND", async () => {
    const url = `${gw.baseURL}/chat/completions`;
    expect((await postJson(url, chat("anthropic/claude-x"), auth(OTHER))).status).toBe(200);
    for (const id of ["nope/none", "openai/gpt-4o\r\n", "a\nb"]) {
      const r = await postJson(url, chat(id), auth(OTHER));
      expect(r.status, JSON.stringify(id)).toBe(404);
      expect(r.json.error.code).toBe("MODEL_NOT_FOUND");
    }
  });
});
