// The catalog as the official SDKs and Claude Code read it: the Anthropic SDK and Claude Code's gateway model
// discovery send the key as x-api-key, and both SDKs' models.retrieve send the id's slash encoded (%2F).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { startTestGateway, testKey, keyEntry, type TestGateway } from "./helpers/gateway.ts";

const KEY = testKey("catalogsdk");
let gw: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway({
    providers: { up: { protocol: "openai", base_url: "http://127.0.0.1:9/v1", api_key: "sk-fake-upstream" } },
    models: {
      "anthropic/claude-sonnet-4.5": { name: "Claude Sonnet 4.5", context_window: 200000, endpoints: [{ provider: "up", model: "claude-sonnet-4.5" }] },
      "openai/gpt-4o": { endpoints: [{ provider: "up", model: "gpt-4o" }] },
    },
    projects: { p: { keys: [keyEntry("k", KEY)] } },
  });
});

afterAll(async () => {
  await gw?.close();
});

const anthropic = () => new Anthropic({ apiKey: KEY, baseURL: `${gw.url}/api`, maxRetries: 0 });

describe("the catalog with an Anthropic client's x-api-key", () => {
  it("Claude Code's gateway model discovery (GET /v1/models?limit=1000, x-api-key) gets the models it keeps", async () => {
    const res = await fetch(`${gw.url}/api/v1/models?limit=1000`, { headers: { "x-api-key": KEY, "anthropic-version": "2023-06-01" } });
    expect(res.status).toBe(200);
    const body = await res.json() as { data: { id: unknown }[] };
    // What Claude Code keeps: data[].id strings starting with claude or anthropic.
    expect(body.data.every((m) => typeof m.id === "string")).toBe(true);
    expect(body.data.map((m) => m.id).filter((id) => /^(claude|anthropic)/i.test(id as string))).toEqual(["anthropic/claude-sonnet-4.5"]);
  });

  it("the Anthropic SDK's models.list and models.retrieve (its slash sent as %2F) answer", async () => {
    const page = await anthropic().models.list({ limit: 5 });
    expect(page.data.map((m) => m.id)).toEqual(["anthropic/claude-sonnet-4.5", "openai/gpt-4o"]);
    expect(page.hasNextPage()).toBe(false);
    const one = await anthropic().models.retrieve("anthropic/claude-sonnet-4.5");
    expect(one).toMatchObject({ id: "anthropic/claude-sonnet-4.5", name: "Claude Sonnet 4.5" });
  });

  it("a wrong x-api-key is still refused, and the encoded id of an unknown model is a 404 naming it", async () => {
    const bad = new Anthropic({ apiKey: testKey("nobody"), baseURL: `${gw.url}/api`, maxRetries: 0 });
    await expect(bad.models.list()).rejects.toMatchObject({ status: 401 });
    const err = await anthropic().models.retrieve("anthropic/nope").catch((e) => e);
    expect(err).toMatchObject({ status: 404, error: { error: { code: "MODEL_NOT_FOUND", details: { model: "anthropic/nope" } } } });
  });
});

describe("the catalog through the openai SDK", () => {
  it("models.retrieve with a creator/model id (sent as one encoded segment) answers that model", async () => {
    const client = new OpenAI({ apiKey: KEY, baseURL: gw.baseURL, maxRetries: 0 });
    expect(await client.models.retrieve("openai/gpt-4o")).toMatchObject({ id: "openai/gpt-4o", object: "model" });
  });
});
