// A response-cache hit under input redaction answers as the same request did on a miss, and never with another
// request's values. Before the fix the cache kept the answer as the client got it (placeholders restored), so a hit
// ran the output rules over the client's own e-mail: blocked (400, billed the hit price) or masked ([REDACTED:EMAIL])
// where the miss had answered it. With guardrails placed before the cache (the key is then the redacted request),
// the kept answer held the first request's restored e-mail and a second request with another e-mail was answered
// with the first one's. Shipped shape: SQLite store, the default pipeline (and an explicit one), `cache: {mode: always}`.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import YAML from "yaml";
import { ledgerRecordOf, startTestGateway, type TestGateway } from "./helpers/gateway.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { startFakeCohere, type Reranker } from "./upstreams/rerankers.ts";
import { CACHE_ALWAYS, CHAT_MODEL, cacheConfig } from "./helpers/cache-config.ts";

let openai: FakeOpenAI;
let cohere: Reranker;
let gw: TestGateway;
let early: TestGateway;
let config: ReturnType<typeof cacheConfig>;

/** Guardrails first, then the cache: the key is made from the redacted request. */
const GUARDRAILS_FIRST = ["auth", "allowlist", "budget", "rate-limit", "idempotency", "guardrails", "response-cache", "cache-marker", "router", "fallback", "stream-transcoder", "usage-metering"];

const SPLIT = { rules: [
  { name: "pii-in", detect: ["email"], on: ["input"], action: "redact" },
  { name: "pii-out", detect: ["email"], on: ["output"], action: "block" },
] };
const BOTH_SIDES = { rules: [{ name: "pii", detect: ["email"], on: ["input", "output"], action: "redact" }] };

beforeAll(async () => {
  openai = await startFakeOpenAI();
  // The model refers to the e-mail it was shown, as a model does: by the placeholder it saw.
  openai.textFor = (body) => `I will write to ${/\[EMAIL_\d+\]|[\w.]+@[\w.]+/.exec(JSON.stringify(body.messages))?.[0] ?? "nobody"} today.`;
  cohere = await startFakeCohere();
  config = cacheConfig({ openai: openai.baseUrl, cohere: cohere.baseUrl, dir: mkdtempSync(join(tmpdir(), "mg-cache-redact-")) });
  gw = await startTestGateway(config);
  const shape = cacheConfig({ openai: openai.baseUrl, cohere: cohere.baseUrl, dir: mkdtempSync(join(tmpdir(), "mg-cache-redact-early-")) });
  // Input redaction only: nothing on the output side hides whose e-mail an answer carries.
  (shape.projects.always as Record<string, unknown>).guardrails = { rules: [SPLIT.rules[0]] };
  early = await startTestGateway({ ...shape, pipeline: GUARDRAILS_FIRST });
});
afterAll(async () => {
  await gw?.close();
  await early?.close();
  await openai?.close();
  await cohere?.close();
});

async function guardrails(g: Record<string, unknown> | undefined): Promise<void> {
  const projects = config.projects as Record<string, Record<string, unknown>>;
  if (g) projects.always!.guardrails = g;
  else delete projects.always!.guardrails;
  writeFileSync(gw.configFile, YAML.stringify(config));
  expect(await gw.gateway.reload()).toMatchObject({ ok: true });
}
beforeEach(() => guardrails(undefined));

/** The answer's text, from a JSON answer or the stream's deltas. */
function textOf(body: string, stream: boolean): string {
  if (!stream) return JSON.parse(body).choices?.[0]?.message?.content ?? body;
  let text = "";
  for (const line of body.split("\n")) {
    if (!line.startsWith("data: {")) continue;
    text += JSON.parse(line.slice(6)).choices?.[0]?.delta?.content ?? "";
  }
  return text;
}

async function chat(prompt: string, stream: boolean, on: TestGateway = gw) {
  const res = await fetch(`${on.url}/api/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${CACHE_ALWAYS}` },
    body: JSON.stringify({ model: CHAT_MODEL, max_tokens: 30, messages: [{ role: "user", content: prompt }], ...(stream ? { stream } : {}) }),
  });
  const body = await res.text();
  return { status: res.status, cache: res.headers.get("x-mg-cache"), id: res.headers.get("x-request-id"), text: res.status === 200 ? textOf(body, stream) : body };
}

const completions = () => openai.requests.filter((r) => r.path === "/v1/chat/completions").length;

describe.each([{ stream: false }, { stream: true }])("a hit answers as the miss did (stream: $stream)", ({ stream }) => {
  it("input redacted, output e-mails blocked: the hit is the miss's 200 with the client's own e-mail, not a refusal", async () => {
    await guardrails(SPLIT);
    const prompt = `Please email alice${stream ? "s" : "j"}@example.org about the refund`;
    const miss = await chat(prompt, stream);
    expect([miss.status, miss.cache, miss.text]).toEqual([200, "miss", `I will write to alice${stream ? "s" : "j"}@example.org today.`]);
    const calls = completions();
    const hit = await chat(prompt, stream);
    expect([hit.status, hit.cache, hit.text]).toEqual([200, "hit", miss.text]);
    expect(completions()).toBe(calls);
    expect(await ledgerRecordOf(gw, hit.id)).toMatchObject({ provider: "cache", cacheHit: true, outcome: "ok", guardrail: "redact:pii-in" });
  });

  it("one rule redacting both sides: the hit restores the client's e-mail as the miss did, never masks it", async () => {
    await guardrails(BOTH_SIDES);
    const prompt = `Please email bob${stream ? "s" : "j"}@example.org about the refund`;
    const miss = await chat(prompt, stream);
    expect([miss.status, miss.cache, miss.text]).toEqual([200, "miss", `I will write to bob${stream ? "s" : "j"}@example.org today.`]);
    const hit = await chat(prompt, stream);
    expect([hit.status, hit.cache, hit.text]).toEqual([200, "hit", miss.text]);
  });
});

describe("a kept answer never carries another request's values", () => {
  it("default order: another e-mail in the same words is answered with its own e-mail", async () => {
    await guardrails(BOTH_SIDES);
    expect((await chat("Mail carol@example.org about the invoice", false)).text).toBe("I will write to carol@example.org today.");
    const other = await chat("Mail dave@example.org about the invoice", false);
    expect([other.status, other.text]).toEqual([200, "I will write to dave@example.org today."]);
  });

  it("guardrails before the cache: two requests that redact alike share the answer, each with its own e-mail", async () => {
    const first = await chat("Mail erin@example.org about the order", false, early);
    expect([first.cache, first.text]).toEqual(["miss", "I will write to erin@example.org today."]);
    for (const who of ["frank", "grace", "frank"]) {
      const r = await chat(`Mail ${who}@example.org about the order`, false, early);
      expect([r.status, r.cache, r.text]).toEqual([200, "hit", `I will write to ${who}@example.org today.`]);
    }
  });

  it("guardrails before the cache, streamed: the same", async () => {
    const first = await chat("Mail heidi@example.org about the parcel", true, early);
    expect([first.cache, first.text]).toEqual(["miss", "I will write to heidi@example.org today."]);
    for (const who of ["ivan", "judy"]) {
      const r = await chat(`Mail ${who}@example.org about the parcel`, true, early);
      expect([r.status, r.cache, r.text]).toEqual([200, "hit", `I will write to ${who}@example.org today.`]);
    }
  });

  it("an answer kept under input redaction is not served once the redaction is gone: its placeholders are nobody's", async () => {
    await guardrails(BOTH_SIDES);
    const prompt = "Mail mallory@example.org about the delivery";
    expect((await chat(prompt, false)).text).toBe("I will write to mallory@example.org today.");
    await guardrails(undefined);
    const r = await chat(prompt, false);
    expect([r.status, r.text]).toEqual([200, "I will write to mallory@example.org today."]);
  });
});
