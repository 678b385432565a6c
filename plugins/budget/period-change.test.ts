// A budget's period changed by a reload while a request is in flight (the audit: day -> week made the in-flight hold
// invisible, GET /admin/v1/budgets showed reserved 0, the same request was admitted and both together spent past
// the limit). The request's cost is charged to every period containing its admission, so its hold counts against the
// budget whatever period it has now, until the request settles. Project budgets and a key's own alike.
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { writeFileSync } from "node:fs";
import YAML from "yaml";
import { startTestGateway, postJson, keyEntry, type TestGateway } from "../../test/helpers/gateway.ts";
import { startFakeOpenAI, type FakeOpenAI } from "../../test/upstreams/openai.ts";
import { KEY, auth, chat, policyConfig } from "../../test/helpers/policy-config.ts";
import { periodOf } from "../../core/store/periods.ts";
import { keyScope } from "../../core/store/key-budget.ts";
import { toPico } from "../../core/money/money.ts";
import { awayFromPeriodEnd } from "../../test/helpers/period-end.ts";

const USD = "0.0005"; // one request's worst case fits, two do not
const body = (content: string) => chat("openai/gpt-4o-mini", { max_tokens: 100, messages: [{ role: "user", content }] });

describe.each([
  { name: "a project's budget", scope: "acme", config: (period: string) => ({ budget: { usd: USD, period } }) },
  { name: "a key's own budget", scope: keyScope("acme", "k1"), config: (period: string) => ({ keys: [keyEntry("k1", KEY, { budget: { usd: USD, period } })] }) },
])("$name changed from day to week to month by a reload", ({ scope, config }) => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  let answerHeld: (() => void) | undefined;
  beforeAll(async () => {
    fake = await startFakeOpenAI({ text: "one two three" });
    // "hold" is answered only when the test lets it: the request stays in flight across the reloads.
    fake.hook = (req, res) => {
      if (req.body?.messages?.[0]?.content !== "hold") return false;
      answerHeld = () => {
        if (res.headersSent) return;
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({
          id: "chatcmpl-held", object: "chat.completion", created: 0, model: "gpt-4o-mini",
          choices: [{ index: 0, message: { role: "assistant", content: "done" }, finish_reason: "stop" }],
          usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
        }));
      };
      return true;
    };
    gw = await startTestGateway(policyConfig(fake.baseUrl, { acme: config("day") }));
  });
  afterAll(async () => {
    answerHeld?.();
    await gw?.close();
    await fake?.close();
  });

  // The hold is made in this day (week, month) and looked for under its period's key: the test runs within one day.
  beforeEach(() => awayFromPeriodEnd("day"));

  async function reloadWith(period: string) {
    writeFileSync(gw.configFile, YAML.stringify(policyConfig(fake.baseUrl, { acme: config(period) })));
    expect((await gw.gateway.reload(gw.configFile)).ok).toBe(true);
  }

  it("keeps the in-flight request's hold counted, so the same request is still refused until it settles", async () => {
    const a = postJson(`${gw.baseURL}/chat/completions`, body("hold"), auth());
    a.catch(() => {}); // awaited below; a failed assertion before that must not leave it unhandled
    await vi.waitFor(() => expect(answerHeld).toBeDefined(), { timeout: 5_000, interval: 10 });
    const refused = await postJson(`${gw.baseURL}/chat/completions`, body("again"), auth());
    expect(refused.status).toBe(402);
    expect(refused.json.error.details.reason).toBe("held_by_requests_in_flight");

    for (const period of ["week", "month"] as const) {
      await reloadWith(period);
      const window = periodOf(period, Date.now());
      expect(await gw.gateway.store.reserved(scope, window.key, Date.now())).toBeGreaterThan(0n);
      const b = await postJson(`${gw.baseURL}/chat/completions`, body("again"), auth());
      expect(b.status, `after the change to ${period}`).toBe(402);
      expect(b.json.error.details).toMatchObject({ reason: "held_by_requests_in_flight", period });
    }

    answerHeld!();
    expect((await a).status).toBe(200);
    const month = periodOf("month", Date.now());
    expect(await gw.gateway.store.reserved(scope, month.key, Date.now())).toBe(0n);
    expect((await postJson(`${gw.baseURL}/chat/completions`, body("again"), auth())).status).toBe(200);
    expect(await gw.gateway.store.spent(scope, month.key, month.start)).toBeLessThanOrEqual(toPico(USD));
  });
});
