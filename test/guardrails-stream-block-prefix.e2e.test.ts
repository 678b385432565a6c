// A streamed answer a block rule stops midway, on every client protocol, in the shipped shape (SQLite store, the
// default pipeline, a live key with a budget and rate limits) with docs/guardrails.md's example rules and
// stream_window 64: the client gets the text before the match that had cleared the window (the last 64 characters
// before the block are not sent: they may open another rule's match), then the protocol's error event naming the
// rule, never the matched key; whether the upstream streams the answer in small chunks or writes it all at once.
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
/** A security review's answer: another block rule's match (confidential) is still open when the key completes. */
const INVOICE = "Here is the invoice. BEGIN CONFIDENTIAL salary of CEO is 990k " + TOKEN + " END CONFIDENTIAL refund";
/** A redact rule's match (private) still open when the key completes. */
const ADDRESS = "ok <private>home addr 12 Elm St " + TOKEN + "</private> end";

/** docs/guardrails.md's example project (its rules; the moderation left out: no moderation provider here). */
const GUARDRAILS = {
  rules: [
    { name: "pii", detect: ["email", "phone", "card", "iban", "national_id"], action: "redact", except: ["@acme\\.com$"] },
    { name: "no-secrets", detect: ["secret"], on: ["input", "output"], action: "block" },
    { name: "project-names", patterns: ["\\bPROJ-[0-9]{4}\\b", "falcon\\s+launch"], ignore_case: true, action: "redact", redact_with: "mask" },
    { name: "competitors", keywords: ["Globex", "Initech", "Umbrella Corp"], action: "flag" },
    { name: "billing-only", type: "allow", keywords: ["invoice", "refund", "payment", "subscription"], action: "block" },
    { name: "confidential", patterns: ["BEGIN CONFIDENTIAL[\\s\\S]*?END CONFIDENTIAL"], on: ["output"], action: "block" },
    { name: "private", patterns: ["<private>[\\s\\S]*?</private>"], on: ["output"], action: "redact", redact_with: "mask" },
  ],
  stream_window: 64,
};

const piecesOf = (text: string, size: number) => text.match(new RegExp(`.{1,${size}}`, "gs"))!;
/** Small chunks (5 characters each unless said, paced), or the whole answer in one chunk written with the rest of the stream. */
const WRITES = { "small chunks": { pace: undefined }, "one write": { pace: "burst" as const } };
type Write = keyof typeof WRITES;
let write: Write = "small chunks";
/** The upstream's answer, and the size of its chunks when it streams small ones. */
let answer = ANSWER;
let small = 5;

let fake: FakeOpenAI;
let gw: TestGateway;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  fake.piecesFor = () => (write === "one write" ? [answer] : piecesOf(answer, small));
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

/** Streams `text` to `protocol` in writes `w` (chunks of `size` when small): the refused answer as the client got it. */
async function blockedStream(protocol: (typeof PROTOCOLS)[number], text: string, w: Write, size = 5) {
  write = w;
  answer = text;
  small = size;
  const r = await ask(gw.url, KEY, protocol, MODEL, "Which invoice token do I use?", true);
  expect(r.status).toBe(200);
  expect(r.errorCode).toBe("GUARDRAIL_BLOCKED");
  expect(r.rule).toBe("no-secrets");
  expect(r.raw).not.toContain("ghp_");
  return { ...r, text: protocol === "gemini" ? answerBeforeSafetyEnding(r.events) : r.text };
}

describe.each(PROTOCOLS)("a streamed answer blocked midway on %s", (protocol) => {
  it("small chunks: the text that had cleared the window when the key completed arrives, then the error", async () => {
    const r = await blockedStream(protocol, ANSWER, "small chunks");
    // The key completes in the chunk ending at character 145; what had 64 characters after it by then goes out.
    expect(r.text).toBe("AAAAAAAAAA BBBBBBBBBB CCCCCCCCCC DDDDDDDDDD EEEEEEEEEE FFFFFFFFFF GGGGGGGGGG HHHH");
  });

  it("one write: all the text before the key arrives, then the error", async () => {
    const r = await blockedStream(protocol, ANSWER, "one write");
    expect(r.text).toBe(CLEAN);
  });

  it("another block rule's match still open when the key completes, in chunks of 4: none of the confidential text", async () => {
    const r = await blockedStream(protocol, INVOICE, "small chunks", 4);
    expect(r.text).toBe("Here is the invoice. BEGIN CONFIDENTIAL ");
    expect(r.raw).not.toContain("salary");
  });

  it("another block rule's match in one write: the text before the confidential part", async () => {
    const r = await blockedStream(protocol, INVOICE, "one write");
    expect(r.text).toBe("Here is the invoice. ");
    expect(r.raw).not.toContain("CONFIDENTIAL");
  });
});

describe("a redact rule's match still open when a block rule stops the stream (chat)", () => {
  it("in chunks of 4: the private text never goes out unmasked", async () => {
    const r = await blockedStream("chat", ADDRESS, "small chunks", 4);
    expect(r.text).toBe("ok <priv");
    expect(r.raw).not.toContain("home addr");
  });

  it("in one write: the text before the private part", async () => {
    const r = await blockedStream("chat", ADDRESS, "one write");
    expect(r.text).toBe("ok ");
  });
});
