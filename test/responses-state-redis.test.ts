// Stored responses on the Redis store (a real redis-server): two gateways sharing it continue each other's
// conversations through the simulator (sandbox key); records are keys under the prefix with a PX expiry equal to the
// retention; delete removes them; another project still gets a 404.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import OpenAI from "openai";
import { Redis } from "ioredis";
import { ulid } from "ulid";
import { startRedis, type TestRedis } from "./helpers/redis.ts";
import { keyEntry, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";

const SANDBOX = testKey("resp-redis", true);
const OTHER = testKey("resp-redis-o", true);
const prefix = `mg-${ulid()}:`;
let redis: TestRedis;
let a: TestGateway;
let b: TestGateway;
let r: Redis;

beforeAll(async () => {
  redis = await startRedis();
  const config = {
    store: { kind: "redis", url: redis.url, prefix, responses_retention_days: 2 },
    models: { "openai/gpt-4o-mini": { type: "language", endpoints: [{ provider: "sim", model: "gpt-4o-mini" }] } },
    projects: { acme: { keys: [keyEntry("sb", SANDBOX)] }, rival: { keys: [keyEntry("ob", OTHER)] } },
  };
  [a, b] = await Promise.all([startTestGateway(config), startTestGateway(config)]);
  r = new Redis(redis.url);
});

afterAll(async () => {
  r?.disconnect();
  await Promise.all([a?.close(), b?.close()]);
  await redis?.stop();
});

const tools: OpenAI.Responses.FunctionTool[] = [{
  type: "function", name: "get_weather", strict: false,
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
}];
const model = "openai/gpt-4o-mini";

describe("stored responses on Redis", () => {
  it("a tool loop started on one gateway continues on the other with previous_response_id (simulator)", async () => {
    const ca = new OpenAI({ apiKey: SANDBOX, baseURL: a.baseURL, maxRetries: 0 });
    const cb = new OpenAI({ apiKey: SANDBOX, baseURL: b.baseURL, maxRetries: 0 });
    const first = await ca.responses.create({ model, input: "Weather in Paris?", tools, tool_choice: { type: "function", name: "get_weather" } });
    const fc = first.output.find((o) => o.type === "function_call") as OpenAI.Responses.ResponseFunctionToolCall;
    expect(fc).toBeDefined();
    const second = await cb.responses.stream({ model, previous_response_id: first.id, input: [{ type: "function_call_output", call_id: fc.call_id, output: "{\"temp\":21}" }], tools }).finalResponse();
    expect(second.previous_response_id).toBe(first.id);
    expect(second.output_text.length).toBeGreaterThan(0);
    const items = await ca.responses.inputItems.list(second.id, { order: "asc" });
    expect(items.data.map((i) => i.type)).toEqual(["message", "function_call", "function_call_output"]);
    expect(items.data[1]!.id).toBe(fc.id);
    expect((await cb.responses.retrieve(first.id)).id).toBe(first.id);
  });

  it("records are keys under the prefix with a PX expiry of the retention; delete removes them; other projects get 404", async () => {
    const c = new OpenAI({ apiKey: SANDBOX, baseURL: a.baseURL, maxRetries: 0 });
    const resp = await c.responses.create({ model, input: "Hi" });
    const key = `${prefix}resp:${resp.id}`;
    const ttl = await r.pttl(key);
    expect(ttl).toBeGreaterThan(86_400_000);
    expect(ttl).toBeLessThanOrEqual(2 * 86_400_000);
    // A sandbox key's items have keys of their own (a live key's are respitem:acme:…).
    const itemKey = `${prefix}respitem-sandbox:acme:${resp.output[0]!.id}`;
    expect(await r.pttl(itemKey)).toBeGreaterThan(86_400_000);
    const rival = new OpenAI({ apiKey: OTHER, baseURL: b.baseURL, maxRetries: 0 });
    await expect(rival.responses.retrieve(resp.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(rival.responses.delete(resp.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await new OpenAI({ apiKey: SANDBOX, baseURL: b.baseURL, maxRetries: 0 }).responses.delete(resp.id);
    expect(await r.exists(key, itemKey)).toBe(0);
    await expect(c.responses.retrieve(resp.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });

  it("store: false writes nothing to Redis", async () => {
    const c = new OpenAI({ apiKey: SANDBOX, baseURL: a.baseURL, maxRetries: 0 });
    const resp = await c.responses.create({ model, input: "Hi", store: false });
    expect(await r.exists(`${prefix}resp:${resp.id}`)).toBe(0);
    await expect(c.responses.retrieve(resp.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });
});
