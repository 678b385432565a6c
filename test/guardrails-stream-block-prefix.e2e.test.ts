// A streamed answer a block rule stops midway, on every client protocol, in the shipped shape (SQLite store, the
// default pipeline, a live key with a budget and rate limits) with docs/guardrails.md's example rules and
// stream_window 64: the client gets all the text before the match, then the protocol's error event naming the rule,
// never the matched key; whether the upstream streams the answer in small chunks or writes it all at once.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { startTestGateway, type TestGateway } from "./helpers/gateway.ts";
import { KEY, policyConfig } from "./helpers/policy-config.ts";
import { ask, PROTOCOLS } from "./helpers/protocol-clients.ts";
import type { SseEvent } from "../core/sse/parse.ts";

const MODEL = "openai/gpt-4o-mini";
const CLEAN = "AAAAAAAAAA BBBBBBBBBB CCCCCCCCCC DDDDDDDDDD EEEEEEEEEE FFFFFFFFFF GGGGGGGGGG HHHHHHHHHH invoice token ";
const TOKEN = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
const ANSWER = CLEAN + TOKEN + " then use it in the billing portal for every refund.";

/** docs/guardrails.md's example project (its rules; the moderation left out: no moderation provider here). */
const GUARDRAILS = {
  rules: [
    { name: "pii", detect: ["email", "phone", "card", "iban", "national_id"], action: "redact", except: ["@acme\\.com$"] },
    { name: "no-secrets", detect: ["secret"], on: ["input", "output"], action: "block" },
    { name: "project-names", patterns: ["\\bPROJ-[0-9]{4}\\b", "falcon\\s+launch"], ignore_case: true, action: "redact", redact_with: "mask" },
    { name: "competitors", keywords: ["Globex", "Initech", "Umbrella Corp"], action: "flag" },
    { name: "billing-only", type: "allow", keywords: ["invoice", "refund", "payment", "subscription"], action: "block" },
  ],
  stream_window: 64,
};

/** Small chunks (5 characters each, paced), or the whole answer in one chunk written with the rest of the stream. */
const WRITES = { "small chunks": { pieces: ANSWER.match(/.{1,5}/gs)!, pace: undefined }, "one write": { pieces: [ANSWER], pace: "burst" as const } };
type Write = keyof typeof WRITES;
let write: Write = "small chunks";

let fake: FakeOpenAI;
let gw: TestGateway;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  fake.piecesFor = () => WRITES[write].pieces;
  fake.pace = () => WRITES[write].pace;
  gw = await startTestGateway(policyConfig(fake.baseUrl, {
    store: { kind: "sqlite", path: "./gateway.db" },
    acme: { budget: { usd: "10" }, rate_limits: { rpm: 10_000, tpm: 50_000_000 }, guardrails: GUARDRAILS },
  }));
});
afterAll(async () => {
  await gw?.close();
  await fake?.close();
});

/** A Gemini stream's text before the last candidate that ends it as Google's filters do (SAFETY, the message as text). */
function answerBeforeSafetyEnding(events: SseEvent[]): string {
  const candidates = events.flatMap((ev) => {
    try {
      return [JSON.parse(ev.data)?.candidates?.[0]];
    } catch {
      return [];
    }
  });
  const end = candidates.findIndex((c) => c?.finishReason === "SAFETY");
  expect(end).toBeGreaterThan(0);
  return candidates.slice(0, end).map((c) => (c?.content?.parts ?? []).map((p: any) => p.text ?? "").join("")).join("");
}

describe.each(PROTOCOLS)("a streamed answer blocked midway on %s", (protocol) => {
  it.each(Object.keys(WRITES) as Write[])("%s: the text before the key arrives, then the error", async (w) => {
    write = w;
    const r = await ask(gw.url, KEY, protocol, MODEL, "Which invoice token do I use?", true);
    expect(r.status).toBe(200);
    expect(r.errorCode).toBe("GUARDRAIL_BLOCKED");
    expect(r.rule).toBe("no-secrets");
    expect(r.raw).not.toContain("ghp_");
    expect(protocol === "gemini" ? answerBeforeSafetyEnding(r.events) : r.text).toBe(CLEAN);
  });
});
