// Stored responses on the gateway as it ships (its gateway.yaml: SQLite store, the README's sandbox key in project
// `demo`), with a live key added to `demo` as the README's `keys new --project demo` does: a project's sandbox keys
// have stored responses of their own. The sandbox key (published in the README) cannot read, list, replay, continue,
// reference, count or delete what the live key stored, and the live key cannot continue the simulator's
// conversation (nothing of it goes upstream): the other kind's id is the 404 another project's is.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { providerEnv, shippedConfig } from "./helpers/shipped-config.ts";
import { startFakeOpenAIResponses, type FakeOpenAIWithResponses } from "./upstreams/openai-responses.ts";
import { startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";

const SANDBOX = "mg_test_quickstart_sandbox_key_0001";
const LIVE = testKey("demo-live");
const model = "openai/gpt-4o-mini";
let openai: FakeOpenAIWithResponses;
let anthropic: FakeAnthropic;
let gw: TestGateway;

beforeAll(async () => {
  // The shipped openai provider answers Responses requests on its own /responses.
  [openai, anthropic] = await Promise.all([startFakeOpenAIResponses(), startFakeAnthropic()]);
  const config = shippedConfig({ openai: openai.baseUrl, anthropic: anthropic.baseUrl });
  config.projects.demo.keys.push(keyEntry("demo-live", LIVE));
  gw = await startTestGateway(config, { env: providerEnv(config) });
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([openai?.close(), anthropic?.close()]);
});

const auth = (key: string) => ({ authorization: `Bearer ${key}` });
const create = (key: string, body: Record<string, unknown>) => postJson(`${gw.baseURL}/responses`, { model, ...body }, auth(key));
const count = (key: string, body: Record<string, unknown>) => postJson(`${gw.baseURL}/responses/input_tokens`, { model, ...body }, auth(key));
const call = (key: string, path: string, method = "GET") => fetch(`${gw.baseURL}/responses/${path}`, { method, headers: auth(key) });

/** Every way `key` can reach a stored response `r` (its id and first output item) it must not see: each refused. */
async function expectApart(key: string, r: { id: string; output: { id: string }[] }): Promise<void> {
  for (const path of [r.id, `${r.id}/input_items`, `${r.id}?stream=true`]) {
    const res = await call(key, path);
    expect(res.status, path).toBe(404);
    expect((await res.json()).error.code).toBe("NOT_FOUND");
  }
  const continued = await create(key, { input: "go on", previous_response_id: r.id });
  expect(continued.status).toBe(404);
  expect(continued.json.error).toMatchObject({ code: "NOT_FOUND", param: "previous_response_id" });
  const referenced = await create(key, { input: [{ type: "item_reference", id: r.output[0]!.id }] });
  expect(referenced.status).toBe(400);
  expect(referenced.json.error).toMatchObject({ code: "INVALID_REQUEST", param: "input[0].id" });
  const counted = await count(key, { input: "go on", previous_response_id: r.id });
  expect(counted.status).toBe(404);
  expect(counted.json.error).toMatchObject({ code: "NOT_FOUND", param: "previous_response_id" });
  expect((await call(key, r.id, "DELETE")).status).toBe(404);
}

describe("stored responses: a project's sandbox and live keys each have their own", () => {
  it("the README's sandbox key reaches nothing the project's live key stored, which stays whole", async () => {
    const live = await create(LIVE, { input: "live secret" });
    expect(live.status, live.text).toBe(200);
    const upstreamBefore = openai.requests.length;
    await expectApart(SANDBOX, live.json);
    // Nor did its DELETE reach the upstream's copy (the sandbox key reaches only the simulator anyway).
    expect(openai.requests.length).toBe(upstreamBefore);
    expect(openai.responses.stored.has(live.json.id)).toBe(true);
    // Still there for the live key, unchanged (the sandbox DELETE removed nothing).
    const kept = await call(LIVE, live.json.id);
    expect(kept.status).toBe(200);
    expect((await kept.json()).id).toBe(live.json.id);
    const items = await (await call(LIVE, `${live.json.id}/input_items`)).json();
    expect(JSON.stringify(items.data)).toContain("live secret");
  });

  it("the live key cannot continue the simulator's conversation: nothing of it goes upstream", async () => {
    const sim = await create(SANDBOX, { input: "sandbox text" });
    expect(sim.status).toBe(200);
    const upstreamBefore = openai.requests.length;
    await expectApart(LIVE, sim.json);
    expect(openai.requests.length).toBe(upstreamBefore);
    // The sandbox key's own conversation goes on as before.
    expect((await call(SANDBOX, sim.json.id)).status).toBe(200);
    const next = await create(SANDBOX, { input: "and then?", previous_response_id: sim.json.id });
    expect(next.status).toBe(200);
    expect((await count(SANDBOX, { input: "and then?", previous_response_id: sim.json.id })).status).toBe(200);
    const items = await (await call(SANDBOX, `${next.json.id}/input_items?order=asc`)).json();
    expect(JSON.stringify(items.data)).toContain("sandbox text");
  });
});
