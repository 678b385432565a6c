// The catalog as the official SDKs and Claude Code read it: the Anthropic SDK and Claude Code's gateway model
// discovery send the key as x-api-key, and both SDKs' models.retrieve send the id's slash encoded (%2F).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { startTestGateway, testKey, keyEntry, type TestGateway } from "./helpers/gateway.ts";
import { validateAnthropicModelInfo, validateAnthropicModelList } from "../core/generated/validators.js";

const KEY = testKey("catalogsdk");
const EXTRA = Array.from({ length: 23 }, (_, i) => `acme/m${String(i).padStart(2, "0")}`);
const ALL = ["anthropic/claude-sonnet-4.5", "openai/gpt-4o", ...EXTRA];
let gw: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway({
    providers: { up: { protocol: "openai", base_url: "http://127.0.0.1:9/v1", api_key: "sk-fake-upstream" } },
    models: {
      "anthropic/claude-sonnet-4.5": { name: "Claude Sonnet 4.5", context_window: 200000, max_tokens: 64000, created: 1759104000, endpoints: [{ provider: "up", model: "claude-sonnet-4.5" }] },
      "openai/gpt-4o": { endpoints: [{ provider: "up", model: "gpt-4o" }] },
      // More than the Anthropic list's default page of 20.
      ...Object.fromEntries(EXTRA.map((id) => [id, { endpoints: [{ provider: "up", model: id.slice(5) }] }])),
    },
    projects: { p: { keys: [keyEntry("k", KEY)] } },
  });
});

afterAll(async () => {
  await gw?.close();
});

const anthropic = () => new Anthropic({ apiKey: KEY, baseURL: `${gw.url}/api`, maxRetries: 0 });

describe("the catalog with an Anthropic client's x-api-key", () => {
  it("Claude Code's gateway model discovery (GET /v1/models?limit=1000, x-api-key, anthropic-version) gets every model", async () => {
    const res = await fetch(`${gw.url}/api/v1/models?limit=1000`, { headers: { "x-api-key": KEY, "anthropic-version": "2023-06-01" } });
    expect(res.status).toBe(200);
    const body = await res.json() as { data: { id: unknown }[]; has_more: boolean };
    expect(body.data.map((m) => m.id)).toEqual(ALL);
    expect(body.has_more).toBe(false);
    expect(validateAnthropicModelList(body), JSON.stringify(validateAnthropicModelList.errors)).toBe(true);
    // What Claude Code keeps: data[].id strings starting with claude or anthropic.
    expect(body.data.map((m) => m.id).filter((id) => /^(claude|anthropic)/i.test(id as string))).toEqual(["anthropic/claude-sonnet-4.5"]);
  });

  it("the Anthropic SDK's models.list gets Anthropic's ModelInfo entries, pages by limit / after_id / before_id, and models.retrieve (its slash sent as %2F) one of them", async () => {
    const page = await anthropic().models.list({ limit: 5 });
    expect(page.data.map((m) => m.id)).toEqual(ALL.slice(0, 5));
    expect(page.data[0]).toEqual({
      type: "model", id: "anthropic/claude-sonnet-4.5", display_name: "Claude Sonnet 4.5", created_at: "2025-09-29T00:00:00Z",
      max_input_tokens: 200000, max_tokens: 64000,
    });
    expect(page.data[1]).toMatchObject({ type: "model", id: "openai/gpt-4o", display_name: "openai/gpt-4o", created_at: "1970-01-01T00:00:00Z" });
    expect(page).toMatchObject({ has_more: true, first_id: ALL[0], last_id: ALL[4] });
    // The default page is 20, and the SDK's auto-paging (after_id = last_id) reaches every model once.
    expect((await anthropic().models.list()).data).toHaveLength(20);
    const seen: string[] = [];
    for await (const m of anthropic().models.list({ limit: 7 })) seen.push(m.id);
    expect(seen).toEqual(ALL);
    const after = await anthropic().models.list({ after_id: ALL[22]! });
    expect(after).toMatchObject({ data: [{ id: ALL[23] }, { id: ALL[24] }], has_more: false, first_id: ALL[23], last_id: ALL[24] });
    const before = await anthropic().models.list({ before_id: ALL[3]!, limit: 2 });
    expect(before).toMatchObject({ data: [{ id: ALL[1] }, { id: ALL[2] }], has_more: true, first_id: ALL[1], last_id: ALL[2] });

    const one = await anthropic().models.retrieve("anthropic/claude-sonnet-4.5");
    expect(one).toEqual(page.data[0]);
    expect(validateAnthropicModelInfo(one)).toBe(true);
  });

  // The SDK's _request_id (withResponse's request_id) comes from request-id: null without it, nothing to quote.
  it("its answers carry request-id, the same id as X-Request-Id, so the SDK's request_id is set; without anthropic-version there is none", async () => {
    const list = await anthropic().models.list({ limit: 1 }).withResponse();
    expect(list.request_id).toMatch(/^req_/);
    expect(list.request_id).toBe(list.response.headers.get("x-request-id"));
    const one = await anthropic().models.retrieve("anthropic/claude-sonnet-4.5").withResponse();
    expect(one.request_id).toBe(one.response.headers.get("x-request-id"));
    expect(one.request_id).toMatch(/^req_/);
    const plain = await fetch(`${gw.url}/api/v1/models`, { headers: { authorization: `Bearer ${KEY}` } });
    expect(plain.status).toBe(200);
    expect(plain.headers.get("request-id")).toBeNull();
    // The endpoints route's errors too (what /api/openapi.json says of every catalog route).
    const missing = await fetch(`${gw.url}/api/v1/models/anthropic%2Fnope/endpoints`, { headers: { "x-api-key": KEY, "anthropic-version": "2023-06-01" } });
    expect(missing.status).toBe(404);
    expect(missing.headers.get("request-id")).toMatch(/^req_/);
    expect(await missing.json()).toMatchObject({ type: "error", error: { type: "not_found_error" } });
  });

  it("a limit outside 1..1000 or a cursor naming no model is a 400 naming the parameter", async () => {
    for (const [query, field] of [["limit=1001", "limit"], ["limit=0", "limit"], ["after_id=acme%2Fnope", "after_id"]] as const) {
      const res = await fetch(`${gw.url}/api/v1/models?${query}`, { headers: { "x-api-key": KEY, "anthropic-version": "2023-06-01" } });
      expect(res.status, query).toBe(400);
      expect(JSON.stringify(await res.json()), query).toContain(field);
    }
  });

  // The SDK raises its own classes from Anthropic's envelope: in the OpenAI one err.type was undefined, and without
  // request-id err.requestID was null (nothing to quote to an operator).
  it("a wrong x-api-key is still refused, and the encoded id of an unknown model is a 404 naming it, in Anthropic's envelope with request-id", async () => {
    const bad = new Anthropic({ apiKey: testKey("nobody"), baseURL: `${gw.url}/api`, maxRetries: 0 });
    const denied = await bad.models.list().catch((e) => e);
    expect(denied).toBeInstanceOf(Anthropic.AuthenticationError);
    expect(denied).toMatchObject({ status: 401, type: "authentication_error", requestID: expect.stringMatching(/^req_/) });
    expect(denied.headers.get("x-should-retry")).toBe("false");
    const err = await anthropic().models.retrieve("anthropic/nope").catch((e) => e);
    expect(err).toBeInstanceOf(Anthropic.NotFoundError);
    expect(err).toMatchObject({ status: 404, type: "not_found_error", requestID: expect.stringMatching(/^req_/),
      error: { type: "error", error: { type: "not_found_error", code: "MODEL_NOT_FOUND", details: { model: "anthropic/nope" } } } });
    const cursor = await anthropic().models.list({ after_id: "acme/nope" }).catch((e) => e);
    expect(cursor).toBeInstanceOf(Anthropic.BadRequestError);
    expect(cursor).toMatchObject({ status: 400, type: "invalid_request_error", requestID: expect.stringMatching(/^req_/) });
    expect(cursor.message).toContain("after_id");
  });
});

describe("the catalog through the openai SDK", () => {
  it("models.retrieve with a creator/model id (sent as one encoded segment) answers that model; models.list the whole catalog in its own shape", async () => {
    const client = new OpenAI({ apiKey: KEY, baseURL: gw.baseURL, maxRetries: 0 });
    expect(await client.models.retrieve("openai/gpt-4o")).toMatchObject({ id: "openai/gpt-4o", object: "model", type: "language" });
    const list = await client.models.list();
    expect(list.data.map((m) => m.id)).toEqual(ALL);
    expect(list.data[0]).toMatchObject({ object: "model", created: 1759104000, name: "Claude Sonnet 4.5", context_window: 200000 });
  });
});

describe("a model's endpoints with the id as one encoded segment", () => {
  const get = (path: string) => fetch(`${gw.url}/api/v1/models/${path}`, { headers: { authorization: `Bearer ${KEY}` } });

  it("answers the same endpoints list as the creator/model path", async () => {
    const encoded = await get("anthropic%2Fclaude-sonnet-4.5/endpoints");
    expect(encoded.status).toBe(200);
    const body = await encoded.json() as { data: { id: string; endpoints: unknown[] } };
    expect(body.data).toMatchObject({ id: "anthropic/claude-sonnet-4.5", name: "Claude Sonnet 4.5" });
    expect(body).toEqual(await (await get("anthropic/claude-sonnet-4.5/endpoints")).json());
  });

  it("an unknown one is a 404 naming the decoded id (in the OpenAI envelope without anthropic-version)", async () => {
    const res = await get("anthropic%2Fnope/endpoints");
    expect(res.status).toBe(404);
    expect(res.headers.get("request-id")).toBeNull();
    expect(await res.json()).toMatchObject({ error: { code: "MODEL_NOT_FOUND", details: { model: "anthropic/nope" } } });
  });
});
