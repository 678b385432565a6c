// What the response cache keeps under redaction, read from the store itself, and what a hit of it answers. The kept
// answer has the output rules applied (their masks in it) and the input redaction's placeholders still in (each hit
// restores its own): no value a rule redacted is ever written to the store. Before the fix the cache kept the answer
// as the provider sent it, so an e-mail an output rule masked for the client sat in plain text in the store; and a hit
// whose tool input had the same e-mails under other keys in another order restored them into the wrong places.
// Shipped shape: SQLite store, the default pipeline and one placing guardrails before the cache, `cache: {mode: always}`.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { keyEntry, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { startFakeCohere, type Reranker } from "./upstreams/rerankers.ts";
import { CACHE_ALWAYS, CHAT_MODEL, cacheConfig } from "./helpers/cache-config.ts";

const GUARDRAILS_FIRST = ["auth", "allowlist", "budget", "rate-limit", "idempotency", "guardrails", "response-cache", "cache-marker", "router", "fallback", "stream-transcoder", "usage-metering"];
/** E-mails redacted both ways: placeholders in what leaves, masks on what comes back. */
const BOTH_SIDES = { rules: [{ name: "pii", detect: ["email"], on: ["input", "output"], action: "redact" }] };
const CACHE_BLOCKING = testKey("cacheoutblock");
const OUTSIDER = "ops-admin@internal.corp";

let openai: FakeOpenAI;
let cohere: Reranker;
let gw: TestGateway;
let early: TestGateway;

function config(dir: string) {
  const c = cacheConfig({ openai: openai.baseUrl, cohere: cohere.baseUrl, dir: mkdtempSync(join(tmpdir(), dir)) });
  const projects = c.projects as Record<string, Record<string, unknown>>;
  projects.always!.guardrails = BOTH_SIDES;
  projects.blocking = {
    keys: [keyEntry("kb", CACHE_BLOCKING)], cache: { mode: "always" },
    guardrails: { rules: [{ name: "no-mail-out", detect: ["email"], on: ["output"], action: "block" }] },
  };
  return c;
}

/** The owner a tool input named (a placeholder, as the model sees it), or undefined when none did. */
function ownerIn(body: any): string | undefined {
  for (const m of body.messages ?? []) for (const tc of m.tool_calls ?? []) {
    const owner = JSON.parse(tc.function?.arguments ?? "{}").owner;
    if (owner) return owner;
  }
  return undefined;
}

beforeAll(async () => {
  openai = await startFakeOpenAI();
  // The model answers with the e-mail it was shown (by its placeholder) and one of its own, which no request sent.
  openai.textFor = (body) => {
    const owner = ownerIn(body);
    if (owner) return `The owner is ${owner}.`;
    return `I will write to ${/\[EMAIL_\d+\]|[\w.]+@[\w.]+/.exec(JSON.stringify(body.messages))?.[0] ?? "nobody"} today, cc ${OUTSIDER}.`;
  };
  cohere = await startFakeCohere();
  gw = await startTestGateway(config("mg-cache-kept-"));
  early = await startTestGateway({ ...config("mg-cache-kept-early-"), pipeline: GUARDRAILS_FIRST });
});
afterAll(async () => {
  await gw?.close();
  await early?.close();
  await openai?.close();
  await cohere?.close();
});

/** Every answer in the gateway's SQLite store. */
function storeValues(on: TestGateway): string[] {
  const db = new Database((on.gateway.config.raw.store as { path: string }).path, { readonly: true });
  try {
    return (db.prepare("SELECT value FROM response_cache").all() as { value: string }[]).map((r) => r.value);
  } finally {
    db.close();
  }
}

/** The answer kept since the store held `before`, once it is there (kept in the background after the answer went out). */
async function keptSince(on: TestGateway, before: string[]): Promise<string> {
  for (let i = 0; i < 200; i++) {
    const v = storeValues(on).find((s) => !before.includes(s));
    if (v) return v;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error("nothing kept");
}

function textOf(body: string, stream: boolean, messages: boolean): string {
  if (!stream) {
    const j = JSON.parse(body);
    return messages ? j.content?.[0]?.text : j.choices?.[0]?.message?.content;
  }
  let text = "";
  for (const line of body.split("\n")) if (line.startsWith("data: {")) text += JSON.parse(line.slice(6)).choices?.[0]?.delta?.content ?? "";
  return text;
}

async function chat(prompt: string, stream: boolean, on: TestGateway, key = CACHE_ALWAYS) {
  const res = await fetch(`${on.url}/api/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
    body: JSON.stringify({ model: CHAT_MODEL, max_tokens: 40, messages: [{ role: "user", content: prompt }], ...(stream ? { stream } : {}) }),
  });
  const body = await res.text();
  return { status: res.status, cache: res.headers.get("x-mg-cache"), raw: body, text: res.status === 200 ? textOf(body, stream, false) : body };
}

describe.each([
  { order: "default order", stream: false },
  { order: "default order", stream: true },
  { order: "guardrails before the cache", stream: false },
  { order: "guardrails before the cache", stream: true },
])("$order, stream: $stream", ({ order, stream }) => {
  const on = () => (order === "default order" ? gw : early);
  const who = `${stream ? "s" : "j"}${order === "default order" ? "d" : "e"}-olga@example.org`;

  it("the store holds the output rule's mask and the request's placeholder, never a redacted e-mail; the hit answers as the miss", async () => {
    const prompt = `Please email ${who} about the refund`;
    const before = storeValues(on());
    const miss = await chat(prompt, stream, on());
    expect([miss.status, miss.cache, miss.text]).toEqual([200, "miss", `I will write to ${who} today, cc [REDACTED:EMAIL].`]);
    const kept = await keptSince(on(), before);
    expect(kept).toContain("[REDACTED:EMAIL]");
    expect(kept).toContain("[EMAIL_1]");
    expect(kept).not.toContain(OUTSIDER);
    expect(kept).not.toContain(who);
    const hit = await chat(prompt, stream, on());
    expect([hit.status, hit.cache, hit.text]).toEqual([200, "hit", miss.text]);
  });
});

describe("a stream an output rule cuts", () => {
  it("is not kept: nothing with the blocked e-mail reaches the store, and the next request asks the provider again", async () => {
    const prompt = "Please email cut-olga@example.org about the refund";
    const first = await chat(prompt, true, gw, CACHE_BLOCKING);
    expect(first.raw).toContain("GUARDRAIL_BLOCKED");
    const calls = openai.requests.length;
    const again = await chat(prompt, true, gw, CACHE_BLOCKING);
    expect(again.cache).toBe("miss");
    expect(openai.requests.length).toBe(calls + 1);
    expect(storeValues(gw).some((v) => v.includes("cut-olga@example.org"))).toBe(false);
  });
});

describe("a tool input's key order", () => {
  /** A Messages request whose tool_use input has these members, in this order. */
  async function ask(input: Record<string, string>) {
    const res = await fetch(`${gw.url}/api/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": CACHE_ALWAYS, "anthropic-version": "2023-06-01" },
      body: JSON.stringify({
        model: CHAT_MODEL, max_tokens: 40,
        tools: [{ name: "lookup", input_schema: { type: "object" } }],
        messages: [
          { role: "user", content: "Look up the ticket" },
          { role: "assistant", content: [{ type: "tool_use", id: "toolu_01", name: "lookup", input }] },
          { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_01", content: "found" }, { type: "text", text: "Who is the owner?" }] },
        ],
      }),
    });
    const body = await res.text();
    return { status: res.status, text: res.status === 200 ? textOf(body, false, true) : body };
  }

  it("the same members in another order are answered with the owner's own e-mail, as a miss would", async () => {
    const first = await ask({ owner: "olivia@corp.com", customer: "carl@client.com" });
    expect(first).toEqual({ status: 200, text: "The owner is olivia@corp.com." });
    const swapped = await ask({ customer: "carl@client.com", owner: "olivia@corp.com" });
    expect(swapped).toEqual({ status: 200, text: "The owner is olivia@corp.com." });
  });
});

describe.each([
  { api: "messages", path: "/messages" },
  { api: "responses", path: "/responses" },
])("a $api stream, checked and restored in two passes on a miss", ({ api, path }) => {
  /** The text of the deltas the stream sent. */
  const deltas = (body: string) => body.split("\n").filter((l) => l.startsWith("data: {")).map((l) => JSON.parse(l.slice(6)))
    .map((e) => (api === "messages" ? e.delta?.text : e.type === "response.output_text.delta" ? e.delta : undefined) ?? "").join("");

  it("keeps the masks and placeholders, and the hit sends what the miss sent", async () => {
    const who = `${api}-olga@example.org`;
    const body = api === "messages"
      ? { model: CHAT_MODEL, max_tokens: 40, stream: true, messages: [{ role: "user", content: `Please email ${who} about the refund` }] }
      : { model: CHAT_MODEL, stream: true, input: `Please email ${who} about the refund` };
    const ask = async () => {
      const res = await fetch(`${gw.url}/api/v1${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${CACHE_ALWAYS}`, "x-api-key": CACHE_ALWAYS, "anthropic-version": "2023-06-01" },
        body: JSON.stringify(body),
      });
      return { cache: res.headers.get("x-mg-cache"), text: deltas(await res.text()) };
    };
    const before = storeValues(gw);
    const miss = await ask();
    expect(miss).toEqual({ cache: "miss", text: `I will write to ${who} today, cc [REDACTED:EMAIL].` });
    const kept = await keptSince(gw, before);
    expect([kept.includes("[EMAIL_1]"), kept.includes("[REDACTED:EMAIL]"), kept.includes(OUTSIDER), kept.includes(who)]).toEqual([true, true, false, false]);
    expect(await ask()).toEqual({ cache: "hit", text: miss.text });
  });
});
