// A key's own budget, on top of its project's: a key created through the admin API with `budget` (and one declared
// in gateway.yaml with `budget:`) is refused with 402 BUDGET_EXCEEDED naming the key once its own spend reaches it,
// while the project's other keys go on; both holds are given back after every request (nothing stays reserved).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, postJson, keyEntry, testKey, type TestGateway } from "./helpers/gateway.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { auth, chat, KEY, policyConfig } from "./helpers/policy-config.ts";
import { sha256Hex } from "../core/keys/keys.ts";
import { slowStoreCall } from "./helpers/slow-store.ts";
import { randomUUID } from "node:crypto";

const ADMIN = "mg_admin_key_budget_test_key_0001";
const CAPPED = testKey("capped");

describe("per-key budgets", () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  const adminGet = async (path: string) => (await fetch(`${gw.url}/admin/v1${path}`, { headers: { authorization: `Bearer ${ADMIN}` } })).json() as Promise<any>;

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    const base = policyConfig(fake.baseUrl, { store: { kind: "sqlite", path: "./data/gateway.db" }, acme: { budget: { usd: "10" }, rate_limits: { rpm: 1000 } } });
    (base.projects.acme.keys as unknown[]).push(keyEntry("capped", CAPPED, { budget: { usd: "0.0002", period: "day" } }));
    gw = await startTestGateway({ ...base, admin_keys: [{ id: "ops", sha256: sha256Hex(ADMIN), scope: "write" }] });
  });
  afterAll(async () => {
    await gw?.close();
    await fake?.close();
  });

  async function spendUntilRefused(key: string): Promise<{ served: number; refusal: any }> {
    for (let served = 0; served < 50; served++) {
      const r = await postJson(`${gw.baseURL}/chat/completions`, chat(), auth(key));
      if (r.status === 402) return { served, refusal: r.json };
      expect(r.status).toBe(200);
    }
    throw new Error("never refused");
  }

  it("refuses an API-created key past its own budget, naming the key; the project's other keys go on", async () => {
    const made = await postJson(`${gw.url}/admin/v1/keys`, { project: "acme", id: "intern", budget: { usd: "0.0002" } }, { authorization: `Bearer ${ADMIN}` });
    expect(made.status).toBe(201);
    const { served, refusal } = await spendUntilRefused(made.json.key);
    expect(served).toBeGreaterThan(0);
    expect(refusal.error).toMatchObject({ code: "BUDGET_EXCEEDED", details: { project: "acme", key: "intern", scope: "key", budget_usd: "0.0002", period: "month" } });
    expect(refusal.error.message).toMatch(/^Key "intern" of project "acme" has \$[\d.]+ left of its monthly budget of \$0\.0002 \(spent \$[\d.]+\), less than this request may cost /);
    expect((await postJson(`${gw.baseURL}/chat/completions`, chat(), auth(KEY))).status).toBe(200);

    const budgets = await adminGet("/budgets?project=acme");
    const intern = budgets.keys.find((k: any) => k.key === "intern");
    expect(intern).toMatchObject({ source: "api", budget: { limit_usd: "0.0002", reserved_usd: "0" } });
    expect(Number(intern.budget.spent_usd) + Number(intern.budget.remaining_usd)).toBeGreaterThanOrEqual(0.0002 - 1e-12);
    expect(budgets.projects[0].budget.reserved_usd).toBe("0"); // the project's holds were settled or given back too
  });

  it("applies a budget declared on a key in gateway.yaml the same way", async () => {
    const { refusal } = await spendUntilRefused(CAPPED);
    expect(refusal.error.details).toMatchObject({ key: "capped", period: "day", budget_usd: "0.0002" });
    const capped = (await adminGet("/budgets")).keys.find((k: any) => k.key === "capped");
    expect(capped).toMatchObject({ source: "yaml", budget: { period: "day", reserved_usd: "0" } });
    expect(Number(capped.budget.spent_usd)).toBeGreaterThan(0);
  });

  /** The store's releases (or records) each take 300 ms, as a round trip to a remote store can: what runs after the answer shows. */
  async function withSlowStore(op: "release" | "record", run: () => Promise<void>): Promise<void> {
    const restore = slowStoreCall(gw.gateway.store, op);
    try {
      await run();
    } finally {
      restore();
    }
  }
  const withSlowReleases = (run: () => Promise<void>) => withSlowStore("release", run);

  it("gives the key's hold back before the answer completes, even from a store slow to take it", async () => {
    await withSlowReleases(async () => {
      const made = await postJson(`${gw.url}/admin/v1/keys`, { project: "acme", id: "quick", budget: { usd: "5" } }, { authorization: `Bearer ${ADMIN}` });
      expect((await postJson(`${gw.baseURL}/chat/completions`, chat(), auth(made.json.key))).status).toBe(200);
      const quick = (await adminGet("/budgets?project=acme")).keys.find((k: any) => k.key === "quick");
      expect(quick.budget.reserved_usd).toBe("0");
      expect(Number(quick.budget.spent_usd)).toBeGreaterThan(0);
    });
  });

  it("gives the holds of a request refused after the budget check (rate limited) back before the refusal completes", async () => {
    const made = await postJson(`${gw.url}/admin/v1/keys`, { project: "acme", id: "once", budget: { usd: "5" }, rate_limits: { rpm: 1 } }, { authorization: `Bearer ${ADMIN}` });
    expect((await postJson(`${gw.baseURL}/chat/completions`, chat(), auth(made.json.key))).status).toBe(200);
    await withSlowReleases(async () => {
      expect((await postJson(`${gw.baseURL}/chat/completions`, chat(), auth(made.json.key))).status).toBe(429);
      const budgets = await adminGet("/budgets?project=acme");
      expect(budgets.projects[0].budget.reserved_usd).toBe("0");
      expect(budgets.keys.find((k: any) => k.key === "once").budget.reserved_usd).toBe("0");
    });
  });

  it("gives the holds of an idempotent replay (answered without a provider) back before the replay completes", async () => {
    const replay = { ...auth(KEY), "idempotency-key": randomUUID() };
    expect((await postJson(`${gw.baseURL}/chat/completions`, chat(), replay)).status).toBe(200);
    await withSlowReleases(async () => {
      const again = await postJson(`${gw.baseURL}/chat/completions`, chat(), replay);
      expect(again.status).toBe(200);
      expect((await adminGet("/budgets?project=acme")).projects[0].budget.reserved_usd).toBe("0");
    });
  });

  it("gives the holds of an idempotent replay of a stream back before the replay starts", async () => {
    const replay = { ...auth(KEY), "idempotency-key": randomUUID() };
    const first = await postJson(`${gw.baseURL}/chat/completions`, chat("openai/gpt-4o-mini", { stream: true }), replay);
    expect(first.text).toContain("data: [DONE]");
    await withSlowReleases(async () => {
      const again = await postJson(`${gw.baseURL}/chat/completions`, chat("openai/gpt-4o-mini", { stream: true }), replay);
      expect(again.headers.get("idempotent-replayed")).toBe("true");
      expect(again.text).toBe(first.text);
      expect((await adminGet("/budgets?project=acme")).projects[0].budget.reserved_usd).toBe("0");
    });
  });

  it("records a stream that fails midway, and settles its holds, before the error event ends the response", async () => {
    fake.failures.push({ kind: "die-mid-stream", afterChunks: 2 });
    await withSlowStore("record", async () => {
      const requestId = `req_${randomUUID().replaceAll("-", "")}`;
      const failed = await postJson(`${gw.baseURL}/chat/completions`, chat("openai/gpt-4o-mini", { stream: true }), { ...auth(KEY), "x-request-id": requestId });
      expect(failed.status).toBe(200);
      expect(failed.text).not.toContain("data: [DONE]");
      expect(failed.text.trim().split("\n\n").at(-1)).toMatch(/^data: \{"error"/);
      const mine = (await gw.gateway.store.ledger({ project: "acme" })).filter((e) => e.requestId === requestId);
      expect(mine).toMatchObject([{ outcome: "stream_error", status: 200 }]);
      expect((await adminGet("/budgets?project=acme")).projects[0].budget.reserved_usd).toBe("0");
    });
  });
});
