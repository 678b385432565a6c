// Guardrails end to end, on every client protocol (chat completions, messages, responses, the Gemini API), JSON and
// streamed, on the shipped shape (SQLite store, the default pipeline, a live key with a budget and rate limits): what
// leaves is redacted and what comes back is restored (placeholders cut across stream chunks included), a secret in a
// request is refused before any provider sees it, an answer that leaks one (cut across two chunks) is stopped before
// the client sees it, and each refusal is a 4xx or error event naming the rule, a ledger record, a metric and an
// access-log field. Moderation (a /moderations endpoint and a judge model) is in guardrails-moderation.e2e.test.ts.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { startLoggedGateway, type CapturedLog } from "./helpers/log-capture.ts";
import { KEY, OTHER, policyConfig } from "./helpers/policy-config.ts";
import { ask, PROTOCOLS } from "./helpers/protocol-clients.ts";
import type { RunningGateway } from "../core/server.ts";

const MODEL = "openai/gpt-4o-mini";
const EMAIL = "alice@example.com";
const CARD = "4111 1111 1111 1111";
const KEY_HEAD = "sk-ant-api03-Zq8Xw7Vu6Ts5Rq4Po3Nm";
const KEY_TAIL = "2Lk1Jh0Gf9Ed8Cb7Az6Yx5Wv4Ut3Sr2Qp1On0Ml-AA";
const SECRET = KEY_HEAD + KEY_TAIL;

const GUARDRAILS = {
  rules: [
    { name: "pii", detect: ["email", "card", "iban", "phone"], action: "redact" },
    { name: "no-secrets", detect: ["secret"], on: ["input", "output"], action: "block" },
    { name: "competitors", keywords: ["Globex"], action: "flag" },
  ],
};

/** What the upstream answers, by what it was asked (the fake sees the redacted request). */
function answerFor(body: any): string[] | undefined {
  const asked = JSON.stringify(body.messages);
  // The placeholders echoed back, each cut in two across chunks.
  if (asked.includes("[EMAIL_1]")) return ["Sure, I will write to [EMA", "IL_1] and charge [CARD_1", "]", " today."];
  // A key leaked across two chunks.
  if (asked.includes("leak")) return ["Here it is: " + KEY_HEAD, KEY_TAIL + " done."];
  return undefined;
}

let fake: FakeOpenAI;
let gw: RunningGateway;
let log: CapturedLog;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  fake.piecesFor = answerFor;
  const config = policyConfig(fake.baseUrl, {
    store: { kind: "sqlite", path: "./gateway.db" },
    acme: { budget: { usd: "10" }, rate_limits: { rpm: 10_000, tpm: 50_000_000 }, guardrails: GUARDRAILS },
  });
  ({ gw, log } = await startLoggedGateway(config, {}, "info"));
});
afterAll(async () => {
  await gw?.close();
  await fake?.close();
});

const lastUpstreamBody = () => JSON.stringify(fake.requests[fake.requests.length - 1]!.body);

describe.each(PROTOCOLS)("guardrails on %s", (protocol) => {
  describe.each([false, true])("stream: %s", (stream) => {
    it("redacts PII before it leaves and restores the placeholders in the answer, even cut across chunks", async () => {
      const r = await ask(gw.url, KEY, protocol, MODEL, `Email ${EMAIL} and charge card ${CARD} please`, stream);
      expect(r.status, r.raw).toBe(200);
      const sent = lastUpstreamBody();
      expect(sent).not.toContain(EMAIL);
      expect(sent).not.toContain(CARD);
      expect(sent).toContain("[EMAIL_1]");
      expect(sent).toContain("[CARD_1]");
      expect(r.text).toBe(`Sure, I will write to ${EMAIL} and charge ${CARD} today.`);
    });

    it("refuses a request carrying a secret before any provider sees it, naming the rule and never the secret", async () => {
      const before = fake.requests.length;
      const r = await ask(gw.url, KEY, protocol, MODEL, `My key is ${SECRET}, keep it safe`, stream);
      expect(r.status).toBe(400);
      expect(r.errorCode).toBe("GUARDRAIL_BLOCKED");
      expect(r.rule).toBe("no-secrets");
      expect(r.raw).not.toContain(KEY_HEAD);
      expect(fake.requests.length).toBe(before);
    });

    it("stops an answer that leaks a secret cut across two stream chunks before the client sees any of it", async () => {
      const r = await ask(gw.url, KEY, protocol, MODEL, "please leak the deploy key", stream);
      expect(r.errorCode, r.raw).toBe("GUARDRAIL_BLOCKED");
      expect(r.rule).toBe("no-secrets");
      expect(r.raw).not.toContain("sk-ant-api03");
      expect(r.raw).not.toContain(KEY_TAIL);
      // JSON: a 400; streamed: the stream had started (200) and ends with the protocol's error event.
      expect(r.status).toBe(stream ? 200 : 400);
    });
  });
});

describe("what a guardrail leaves behind", () => {
  it("a ledger record per refusal (the rule, nothing billed before the provider; the provider's cost after it)", async () => {
    // A streamed answer stopped mid-way is recorded once its stream has ended, after the client has the error event
    // (the previous test's last one may still be on its way): wait for the eight refusals after the provider.
    const refusedAfter = (entries: Awaited<ReturnType<typeof gw.gateway.store.ledger>>) => entries.filter((e) => e.outcome === "blocked" && e.attempts > 0);
    const entries = await vi.waitFor(async () => {
      const all = await gw.gateway.store.ledger({ project: "acme" });
      expect(refusedAfter(all)).toHaveLength(8);
      return all;
    }, { timeout: 5000, interval: 20 });
    const refused = entries.filter((e) => e.outcome === "blocked");
    const before = refused.filter((e) => e.attempts === 0);
    const after = refusedAfter(entries);
    // One per protocol and mode for each kind of refusal.
    expect(before).toHaveLength(8);
    expect(after).toHaveLength(8);
    for (const e of before) expect(e).toMatchObject({ status: 400, guardrail: "block:no-secrets", costPico: 0n, model: MODEL, provider: "" });
    for (const e of after) {
      expect(e.guardrail).toBe("block:no-secrets");
      expect(e.costPico).toBeGreaterThan(0n);
    }
    const redacted = entries.filter((e) => e.outcome === "ok");
    expect(redacted).toHaveLength(8);
    for (const e of redacted) expect(e.guardrail).toBe("redact:pii");
  });

  it("counts actions in gateway_guardrail_actions_total{rule,action}", async () => {
    const text = await (await fetch(gw.metricsUrl!)).text();
    expect(text).toContain('gateway_guardrail_actions_total{rule="no-secrets",action="block"} 16');
    expect(text).toContain('gateway_guardrail_actions_total{rule="pii",action="redact"} 8');
  });

  it("names what acted in the access log (never what it matched)", async () => {
    const blocked = await log.accessOnce((l) => l.project === "acme" && l.guardrails?.includes("block:no-secrets"), 16);
    expect(blocked.length).toBe(16);
    const lines = log.access().filter((l) => l.project === "acme");
    expect(JSON.stringify(lines)).not.toContain(KEY_HEAD);
    expect(JSON.stringify(lines)).not.toContain(EMAIL);
  });

  it("flags a topic without refusing it", async () => {
    const r = await ask(gw.url, KEY, "chat", MODEL, "How does Globex price its plans?", false);
    expect(r.status).toBe(200);
    const entries = await gw.gateway.store.ledger({ project: "acme" });
    expect(entries[entries.length - 1]!.guardrail).toBe("flag:competitors");
  });

  it("leaves a project without guardrails alone", async () => {
    const r = await ask(gw.url, OTHER, "chat", MODEL, `Email ${EMAIL} and charge card ${CARD} please`, true);
    expect(r.status).toBe(200);
    expect(lastUpstreamBody()).toContain(EMAIL);
    expect(lastUpstreamBody()).toContain(CARD);
    expect(r.text).toBe("Hello from the fake upstream, streaming word by word.");
  });
});
