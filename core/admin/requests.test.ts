// The requests view shows when a record's cost was charged to an earlier budget period than its time: a request
// admitted before midnight and done after it says `charged_at` (the moment it was admitted), which is what tells an
// operator why the new day's spend does not count it. A request within one day has no charged_at.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { startTestGateway, postJson, type TestGateway } from "../../test/helpers/gateway.ts";
import { startFakeOpenAI, type FakeOpenAI } from "../../test/upstreams/openai.ts";
import { auth, chat, policyConfig } from "../../test/helpers/policy-config.ts";
import { sha256Hex } from "../keys/keys.ts";
import { periodOf } from "../store/periods.ts";
import { validateAdminRequest, validateAdminRequestPage } from "../generated/validators.js";

const MIDNIGHT = Date.UTC(2026, 11, 1);
const ADMIN = "mg_admin_requests_read_key_for_tests";

describe("admin requests: charged_at", () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  beforeAll(async () => {
    fake = await startFakeOpenAI({ text: "one two three four five six seven eight nine ten" });
    gw = await startTestGateway({
      ...policyConfig(fake.baseUrl, { acme: { budget: { usd: "1", period: "day" } } }),
      admin_keys: [{ id: "ops", sha256: sha256Hex(ADMIN), scope: "read" }],
    });
  });
  afterEach(() => { vi.useRealTimers(); });
  afterAll(async () => {
    await gw?.close();
    await fake?.close();
  });

  const adminGet = async (path: string, schema: typeof validateAdminRequest) => {
    const res = await fetch(`${gw.url}/admin/v1${path}`, { headers: { authorization: `Bearer ${ADMIN}` } });
    const json = (await res.json()) as any;
    expect(res.status, JSON.stringify(json)).toBe(200);
    expect(schema(json), JSON.stringify(schema.errors)).toBe(true);
    return json;
  };

  it("a request admitted before midnight and done after it shows charged_at; one within a day does not", async () => {
    vi.useFakeTimers({ toFake: ["Date"], now: MIDNIGHT - 9_000, shouldAdvanceTime: true });
    fake.pace = (body) => (body.stream ? 150 : undefined); // the stream runs ~1.5 s
    const a = postJson(`${gw.baseURL}/chat/completions`, chat("openai/gpt-4o-mini", { stream: true }), auth(undefined, { "x-request-id": "admitted-yesterday" }));
    const yesterday = periodOf("day", MIDNIGHT - 1);
    await vi.waitFor(async () => expect(await gw.gateway.store.reserved("acme", yesterday.key, Date.now())).toBeGreaterThan(0n), { timeout: 2_000, interval: 20 });
    vi.setSystemTime(MIDNIGHT + 1_000);
    expect((await a).status).toBe(200);
    expect((await postJson(`${gw.baseURL}/chat/completions`, chat("openai/gpt-4o"), auth(undefined, { "x-request-id": "admitted-today" }))).status).toBe(200);

    const page = await adminGet("/requests?project=acme", validateAdminRequestPage);
    const byId = Object.fromEntries(page.requests.map((r: any) => [r.request_id, r]));
    const crossed = byId["admitted-yesterday"];
    expect(Date.parse(crossed.at)).toBeGreaterThanOrEqual(MIDNIGHT);
    expect(Date.parse(crossed.charged_at)).toBeLessThan(MIDNIGHT);
    expect(Date.parse(crossed.charged_at)).toBeGreaterThanOrEqual(MIDNIGHT - 9_000);
    expect(byId["admitted-today"]).not.toHaveProperty("charged_at");
    expect(await adminGet(`/requests/${crossed.generation_id}`, validateAdminRequest)).toEqual(crossed);
  });
});
