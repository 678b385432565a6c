import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import Big from "big.js";
import { startTestGateway, postJson, type TestGateway } from "../../test/helpers/gateway.ts";
import { startFakeOpenAI, type FakeOpenAI } from "../../test/upstreams/openai.ts";
import { auth, chat, policyConfig, SANDBOX } from "../../test/helpers/policy-config.ts";
import { periodOf } from "../../core/store/periods.ts";
import { picoToUsd } from "../../core/money/money.ts";
import { awayFromPeriodEnd } from "../../test/helpers/period-end.ts";

describe("budget plugin", () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  beforeAll(async () => {
    fake = await startFakeOpenAI();
    gw = await startTestGateway(policyConfig(fake.baseUrl, { acme: { budget: { usd: "0.0003", period: "day" } } }));
  });
  afterAll(async () => {
    await gw?.close();
    await fake?.close();
  });
  const url = () => `${gw.baseURL}/chat/completions`;
  // Budgets of a day (a week, a month: each ends at a day's end), and the spend read for it: each test runs in one day.
  beforeEach(() => awayFromPeriodEnd("day"));

  it("spends up to the cap, then 402 BUDGET_EXCEEDED without calling the upstream; spend equals the ledger", async () => {
    let ok = 0;
    let refused: Awaited<ReturnType<typeof postJson>> | undefined;
    for (let i = 0; i < 50 && !refused; i++) {
      const r = await postJson(url(), chat(), auth());
      if (r.status === 200) ok++;
      else refused = r;
    }
    expect(ok).toBeGreaterThan(1);
    expect(refused!.status).toBe(402);
    expect(refused!.json.error).toMatchObject({ code: "BUDGET_EXCEEDED", details: { project: "acme", period: "day", budget_usd: "0.0003" } });
    // Not used up: what is left is less than this request's worst case, and the message says so (not "has reached").
    expect(refused!.json.error.message).toMatch(/^Project "acme" has \$0\.000\d+ left of its daily budget of \$0\.0003 \(spent \$0\.000\d+\), less than this request may cost \(\$0\.000\d+ at most\): lower max_tokens or raise the budget$/);
    const upstreamCalls = fake.requests.length;
    expect((await postJson(url(), chat(), auth())).status).toBe(402);
    expect(fake.requests.length).toBe(upstreamCalls);

    const ledger = await gw.gateway.store.ledger({ project: "acme" });
    expect(ledger).toHaveLength(ok);
    const total = ledger.reduce((s, e) => s.plus(e.costUsd), new Big(0));
    const p = periodOf("day", Date.now());
    const spent = await gw.gateway.store.spent("acme", p.key, p.start);
    expect(picoToUsd(spent)).toBe(total.toFixed());
    // Settled to the real cost: what is left is less than this request's worst case, never below zero.
    expect(new Big(refused!.json.error.details.spent_usd).eq(total)).toBe(true);
    expect(total.lte("0.0003")).toBe(true);
    expect(new Big(refused!.json.error.details.reserved_usd).eq(0)).toBe(true);
  });

  it("sandbox keys never touch the budget", async () => {
    const r = await postJson(url(), chat(), auth(SANDBOX));
    expect(r.status).toBe(200);
  });

  it("a request whose worst case alone exceeds the cap is refused, even with nothing spent", async () => {
    const big = await startTestGateway(policyConfig(fake.baseUrl, { acme: { budget: { usd: "0.0001", period: "month" } } }));
    try {
      const r = await postJson(`${big.baseURL}/chat/completions`, chat("openai/gpt-4o-mini", { max_tokens: 100 }), auth());
      expect(r.status).toBe(402);
      expect(r.json.error.details.spent_usd).toBe("0");
    } finally {
      await big.close();
    }
  });

  it("a failed upstream call releases its reservation", async () => {
    const g = await startTestGateway(policyConfig(fake.baseUrl, { acme: { budget: { usd: "0.0002", period: "total" } } }));
    try {
      for (let i = 0; i < 3; i++) fake.failures.push({ kind: "status", status: 400 });
      for (let i = 0; i < 3; i++) {
        const r = await postJson(`${g.baseURL}/chat/completions`, chat(), auth());
        expect(r.status).toBeGreaterThanOrEqual(400);
        expect(r.json.error.code).not.toBe("BUDGET_EXCEEDED"); // the earlier failures' reservations were released
      }
      expect((await postJson(`${g.baseURL}/chat/completions`, chat(), auth())).status).toBe(200);
    } finally {
      await g.close();
    }
  });

  it("counts spend through the ledger even without usage-metering in the pipeline", async () => {
    const g = await startTestGateway(policyConfig(fake.baseUrl, { acme: { budget: { usd: "1", period: "week" } }, pipeline: ["auth", "budget", "router"] }));
    try {
      const r = await postJson(`${g.baseURL}/chat/completions`, chat(), auth(undefined, { "x-request-id": "req-no-meter" }));
      expect(r.status).toBe(200);
      let rows: Awaited<ReturnType<typeof g.gateway.store.ledger>> = [];
      for (let i = 0; i < 100 && !rows.length; i++) {
        rows = await g.gateway.store.ledger({ project: "acme" });
        if (!rows.length) await new Promise((res) => setTimeout(res, 10));
      }
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ requestId: "req-no-meter", outputTokens: r.json.usage.completion_tokens });
      const p = periodOf("week", Date.now());
      expect(await g.gateway.store.spent("acme", p.key, p.start)).toBe(rows[0]!.costPico);
    } finally {
      await g.close();
    }
  });
});
