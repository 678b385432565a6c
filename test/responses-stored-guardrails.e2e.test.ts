// Stored Responses state under a project's guardrails, on the shipped shape (SQLite store, the default pipeline, a live
// key with a budget and rate limits, a project with rules of each kind), JSON and streamed: what the client reads back
// (GET /responses/{id}, its input_items, the answer and its stream's events) holds no placeholder and no value an output
// rule masked for it, a value a redact rule took out is kept as its mask (never the value), an answer the rules refused
// is not kept, and a later turn continuing it sends the provider no value redaction kept from it.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { SseParser } from "../core/sse/parse.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { startTestGateway, type TestGateway } from "./helpers/gateway.ts";
import { KEY, policyConfig } from "./helpers/policy-config.ts";

const MODEL = "openai/gpt-4o-mini";
const EMAIL = "alice@example.com";
const OTHER_EMAIL = "bob@example.com";
const CARD = "4111 1111 1111 1111";
/** In no request: the model makes it up, an output rule masks it. */
const IBAN = "DE89 3704 0044 0532 0130 00";
const SECRET_TAIL = "2Lk1Jh0Gf9Ed8Cb7Az6Yx5Wv4Ut3Sr2Qp1On0Ml-AA";
const SECRET = "sk-ant-api03-Zq8Xw7Vu6Ts5Rq4Po3Nm" + SECRET_TAIL;

const GUARDRAILS = {
  rules: [
    { name: "pii", detect: ["email", "card"], action: "redact" },
    { name: "project-names", patterns: ["\\bPROJ-[0-9]{4}\\b"], action: "redact", redact_with: "mask" },
    { name: "bank", detect: ["iban"], on: ["output"], action: "redact" },
    { name: "no-secrets", detect: ["secret"], on: ["input", "output"], action: "block" },
    { name: "competitors", keywords: ["Globex"], action: "flag" },
  ],
};

/** The fake sees what left: it echoes the placeholders it was given, and makes up an IBAN (or leaks a key). */
function answerFor(body: any): string[] | undefined {
  const last = JSON.stringify(body.messages.at(-1));
  if (last.includes("leak")) return ["Here it is: ", SECRET, " done."];
  if (last.includes("[EMAIL_1]")) return ["Sure, I will write to [EMA", "IL_1], charge [CARD_1", "] and pay ", IBAN, " today."];
  return undefined;
}

/** What the client of the first turn is given: its values restored, the made-up IBAN masked. */
const GIVEN = `Sure, I will write to ${EMAIL}, charge ${CARD} and pay [REDACTED:IBAN] today.`;
/** What is kept of it: each redacted value as its mask. */
const KEPT = "Sure, I will write to [REDACTED:EMAIL], charge [REDACTED:CARD] and pay [REDACTED:IBAN] today.";
const ASKED = `Email ${EMAIL} about PROJ-1234 and charge ${CARD}; Globex too`;
const ASKED_KEPT = "Email [REDACTED:EMAIL] about [REDACTED:PROJECT_NAMES] and charge [REDACTED:CARD]; Globex too";

let fake: FakeOpenAI;
let gw: TestGateway;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  fake.piecesFor = answerFor;
  gw = await startTestGateway(policyConfig(fake.baseUrl, {
    store: { kind: "sqlite", path: "./gateway.db" },
    acme: { budget: { usd: "10" }, rate_limits: { rpm: 10_000, tpm: 50_000_000 }, guardrails: GUARDRAILS },
  }));
});
afterAll(async () => {
  await gw?.close();
  await fake?.close();
});

const headers = { "content-type": "application/json", authorization: `Bearer ${KEY}` };

/** POST /responses: the response object (a stream's from its response.completed). */
async function create(body: Record<string, unknown>): Promise<{ status: number; response: any; raw: string }> {
  const res = await fetch(`${gw.url}/api/v1/responses`, { method: "POST", headers, body: JSON.stringify({ model: MODEL, ...body }) });
  const raw = await res.text();
  if (!body.stream) return { status: res.status, response: res.ok ? JSON.parse(raw) : undefined, raw };
  const done = new SseParser().push(raw + "\n\n").find((e) => e.event === "response.completed");
  return { status: res.status, response: done ? JSON.parse(done.data).response : undefined, raw };
}

const get = async (path: string) => {
  const res = await fetch(`${gw.url}/api/v1/responses/${path}`, { headers });
  expect(res.status).toBe(200);
  return res.json() as Promise<any>;
};

const textOf = (response: any): string =>
  (response?.output ?? []).flatMap((it: any) => (it.type === "message" ? it.content : [])).map((p: any) => p.text ?? "").join("");
const inputText = (items: any[]): string[] => items.map((it) => it.content.map((p: any) => p.text).join(""));
/** Each message's text as the upstream got it (a string, or text parts). */
const upstreamTexts = (): string[] =>
  (fake.requests.at(-1)!.body as any).messages.map((m: any) => (typeof m.content === "string" ? m.content : m.content.map((p: any) => p.text).join("")));

describe.each([false, true])("stored responses under guardrails (stream: %s)", (stream) => {
  it("GET /responses/{id} shows the answer as the client was given it, each redacted value as its mask: no placeholder, no value an output rule masked", async () => {
    const first = await create({ stream, instructions: `Reply to ${EMAIL}.`, input: ASKED });
    expect(first.status, first.raw).toBe(200);
    expect(textOf(first.response)).toBe(GIVEN);

    const got = await get(first.response.id);
    expect(textOf(got)).toBe(KEPT);
    const kept = JSON.stringify(got);
    for (const hidden of [IBAN, EMAIL, CARD, "[EMAIL_1]", "[CARD_1]"]) expect(kept).not.toContain(hidden);
    expect(got.instructions).toBe("Reply to [REDACTED:EMAIL].");
  });

  it("GET …/input_items lists the client's input with each redacted value as its mask, never a placeholder", async () => {
    const first = await create({ stream, input: ASKED });
    const items = await get(`${first.response.id}/input_items?order=asc`);
    expect(inputText(items.data)).toEqual([ASKED_KEPT]);
  });

  it("a later turn sends the provider the history as kept: no value, no placeholder of the earlier turn, no value an output rule masked", async () => {
    const first = await create({ stream, input: ASKED });
    const next = await create({ stream, previous_response_id: first.response.id, input: `Now email ${OTHER_EMAIL} instead` });
    expect(next.status, next.raw).toBe(200);
    // [EMAIL_1] is this turn's bob, and only his: the earlier turn's address is a mask, not a second [EMAIL_1].
    expect(upstreamTexts()).toEqual([ASKED_KEPT, KEPT, "Now email [EMAIL_1] instead"]);
    const items = await get(`${next.response.id}/input_items?order=asc`);
    expect(inputText(items.data)).toEqual([ASKED_KEPT, KEPT, "Now email [REDACTED:EMAIL] instead"]);
  });
});

describe.each([false, true])("the answer itself (stream: %s)", (stream) => {
  it("echoes the instructions as the client sent them, in every event that carries the response: no placeholder", async () => {
    const res = await fetch(`${gw.url}/api/v1/responses`, {
      method: "POST", headers, body: JSON.stringify({ model: MODEL, stream, instructions: `Reply to ${EMAIL}.`, input: ASKED }),
    });
    const raw = await res.text();
    expect(res.status, raw).toBe(200);
    const responses = stream
      ? new SseParser().push(raw + "\n\n").flatMap((e) => (JSON.parse(e.data).response ? [JSON.parse(e.data).response] : []))
      : [JSON.parse(raw)];
    expect(responses.length).toBeGreaterThan(stream ? 2 : 0); // created, in_progress, completed
    for (const r of responses) expect(r.instructions).toBe(`Reply to ${EMAIL}.`);
  });
});

describe("an answer the output rules refused", () => {
  it("is not kept, so no GET or later turn can read what the client was refused", async () => {
    const put = vi.spyOn(gw.gateway.store.responses, "put");
    try {
      const r = await create({ input: "please leak the deploy key" });
      expect(r.status).toBe(400);
      expect(r.raw).toContain("GUARDRAIL_BLOCKED");
      expect(put.mock.calls.filter(([rec]) => JSON.stringify(rec).includes(SECRET_TAIL))).toEqual([]);
    } finally {
      put.mockRestore();
    }
  });
});
