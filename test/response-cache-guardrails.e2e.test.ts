// A response-cache hit meets the project's guardrails as the same request answered by the provider does. Before the
// fix, guardrails (last in the pipeline) never saw a hit: after a reload added a block rule on "Globex", the cached
// request was still a 200 hit while a new wording of it was 400 GUARDRAIL_BLOCKED; a flag on a hit left no trace in
// its ledger record; an output rule added after an answer was kept never checked it. And a streamed hit under output
// rules sent other events than its miss (the kept stream was the checked one, whose held-back text the hit's check
// held back again: 23 events against 24 on Messages, shifted sequence numbers on Responses). Shipped shape: SQLite
// store, the full default pipeline, a project with `cache: { mode: always }`, its guardrails changed by live reloads.
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
let config: ReturnType<typeof cacheConfig>;
/** The answer's text, by a word of the prompt. */
const answers = new Map<string, string>();

beforeAll(async () => {
  openai = await startFakeOpenAI();
  openai.textFor = (body) => [...answers].find(([word]) => JSON.stringify(body.messages).includes(word))?.[1];
  // OpenAI's /moderations on the same fake: flagged when the text says "kill".
  openai.hook = (req, res) => {
    if (req.path !== "/v1/moderations") return false;
    if (String(req.body?.input ?? "").includes("unavailable")) {
      res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: "down", type: "server_error", param: null, code: null } }));
      return true;
    }
    const flagged = String(req.body?.input ?? "").includes("kill");
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ id: "modr-1", model: "omni-moderation-latest", results: [{ flagged, categories: { violence: flagged }, category_scores: { violence: flagged ? 0.9 : 0 } }] }));
    return true;
  };
  cohere = await startFakeCohere();
  config = cacheConfig({ openai: openai.baseUrl, cohere: cohere.baseUrl, dir: mkdtempSync(join(tmpdir(), "mg-cache-guard-")) });
  gw = await startTestGateway(config);
});
afterAll(async () => {
  await gw?.close();
  await openai?.close();
  await cohere?.close();
});

/** The `always` project's guardrails, by a live reload (undefined: none). */
async function guardrails(g: Record<string, unknown> | undefined): Promise<void> {
  const projects = config.projects as Record<string, Record<string, unknown>>;
  if (g) projects.always!.guardrails = g;
  else delete projects.always!.guardrails;
  writeFileSync(gw.configFile, YAML.stringify(config));
  expect(await gw.gateway.reload()).toMatchObject({ ok: true });
}
beforeEach(() => guardrails(undefined));

async function chat(prompt: string, extra: Record<string, unknown> = {}) {
  const res = await fetch(`${gw.url}/api/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${CACHE_ALWAYS}` },
    body: JSON.stringify({ model: CHAT_MODEL, max_tokens: 30, messages: [{ role: "user", content: prompt }], ...extra }),
  });
  const text = await res.text();
  return { status: res.status, cache: res.headers.get("x-mg-cache"), id: res.headers.get("x-request-id"), text, json: extra.stream ? undefined : JSON.parse(text) };
}

const completions = () => openai.requests.filter((r) => r.path === "/v1/chat/completions").length;

/** Asked twice: answered by the provider, then kept. */
async function kept(prompt: string, extra: Record<string, unknown> = {}) {
  const first = await chat(prompt, extra);
  expect([first.status, first.cache]).toEqual([200, "miss"]);
  const hit = await chat(prompt, extra);
  expect([hit.status, hit.cache]).toEqual([200, "hit"]);
  return first;
}

const competitors = (action: string, on?: string[]) => ({ rules: [{ name: "competitors", keywords: ["Globex"], action, ...(on ? { on } : {}) }] });

describe("the guardrails' input checks run on a hit", () => {
  it("a block rule added by a reload refuses the kept answer, as it refuses a new wording, and the provider is not called", async () => {
    await kept("Tell me about Globex");
    await guardrails(competitors("block"));
    const calls = completions();
    const again = await chat("Tell me about Globex");
    const reworded = await chat("So, Globex?");
    for (const r of [again, reworded]) {
      expect(r.status).toBe(400);
      expect(r.json.error).toMatchObject({ code: "GUARDRAIL_BLOCKED", details: { rule: "competitors", on: "input" } });
    }
    expect(completions()).toBe(calls);
    // Recorded as a miss's refusal is: blocked, at no cost, not a hit.
    const record = await ledgerRecordOf(gw, again.id);
    expect(record).toMatchObject({ status: 400, outcome: "blocked", guardrail: "block:competitors", costUsd: "0" });
    expect(record.cacheHit).toBeUndefined();
  });

  it("a flag rule lets the hit through, and the hit's ledger record names it", async () => {
    await kept("Is Globex any good?");
    await guardrails(competitors("flag"));
    const hit = await chat("Is Globex any good?");
    expect([hit.status, hit.cache]).toEqual([200, "hit"]);
    expect(await ledgerRecordOf(gw, hit.id)).toMatchObject({ provider: "cache", cacheHit: true, outcome: "ok", guardrail: "flag:competitors" });
  });

  it("moderation judges a hit's request", async () => {
    await kept("How do I kill a stuck process?");
    await guardrails({ moderation: { provider: "up", on: ["input"] } });
    const r = await chat("How do I kill a stuck process?");
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({ code: "GUARDRAIL_BLOCKED", details: { rule: "moderation", on: "input" } });
  });
});

describe("the guardrails' output checks run on the kept answer, which may predate them", () => {
  it("JSON: an output block rule refuses it, recorded as a hit that was blocked", async () => {
    answers.set("partners", "Our partner Globex can help with that.");
    await kept("Who are your partners?");
    await guardrails(competitors("block", ["output"]));
    const r = await chat("Who are your partners?");
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({ code: "GUARDRAIL_BLOCKED", details: { rule: "competitors", on: "output" } });
    expect(await ledgerRecordOf(gw, r.id)).toMatchObject({ provider: "cache", cacheHit: true, status: 400, outcome: "blocked", guardrail: "block:competitors" });
  });

  it("streamed: the hit ends with the protocol's error event in place of the text that matched, as a miss does", async () => {
    answers.set("suppliers", "We buy most of our parts from Globex these days.");
    const stream = { stream: true };
    await kept("Who are your suppliers?", stream);
    await guardrails(competitors("block", ["output"]));
    const r = await chat("Who are your suppliers?", stream);
    expect([r.status, r.cache]).toEqual([200, "hit"]);
    expect(r.text).toContain("GUARDRAIL_BLOCKED");
    expect(r.text).not.toContain("Globex");
    expect(r.text).not.toContain("[DONE]");
    expect(await ledgerRecordOf(gw, r.id)).toMatchObject({ provider: "cache", cacheHit: true, status: 200, outcome: "blocked", guardrail: "block:competitors" });
  });

  it("JSON: a reload adding an output block rule on e-mails refuses the kept answer that has one", async () => {
    answers.set("billing", "Write to billing@example.com for a refund.");
    await kept("Whom do I ask about billing?");
    await guardrails({ rules: [{ name: "no-mail-out", detect: ["email"], on: ["output"], action: "block" }] });
    const r = await chat("Whom do I ask about billing?");
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({ code: "GUARDRAIL_BLOCKED", details: { rule: "no-mail-out", on: "output" } });
  });

  it("a reload adding an output flag rule: the hit is answered, and its ledger record names the rule as the miss's does", async () => {
    answers.set("resells", "Globex resells our kits in Europe.");
    await kept("Who resells your kits?");
    await guardrails(competitors("flag", ["output"]));
    const hit = await chat("Who resells your kits?");
    expect([hit.status, hit.cache, hit.json.choices[0].message.content]).toEqual([200, "hit", "Globex resells our kits in Europe."]);
    expect(await ledgerRecordOf(gw, hit.id)).toMatchObject({ provider: "cache", cacheHit: true, outcome: "ok", guardrail: "flag:competitors" });
  });

  it("a stream an output rule cuts is not kept: the next request asks the provider again", async () => {
    answers.set("rivals", "Our main rival is Globex, as everyone knows.");
    await guardrails(competitors("block", ["output"]));
    const stream = { stream: true };
    const first = await chat("Who are your rivals?", stream);
    expect([first.status, first.cache]).toEqual([200, "miss"]);
    expect(first.text).toContain("GUARDRAIL_BLOCKED");
    const calls = completions();
    const again = await chat("Who are your rivals?", stream);
    expect([again.cache, again.text.includes("GUARDRAIL_BLOCKED")]).toEqual(["miss", true]);
    expect(completions()).toBe(calls + 1);
  });
});

// With output rules the guardrails hold text back while they look across chunks, so the events a client gets are not
// the provider's: a hit goes through the same check over the same kept events, and sends the same events.
describe.each([
  { api: "chat", path: "/v1/chat/completions", body: (prompt: string) => ({ model: CHAT_MODEL, max_tokens: 60, stream: true, messages: [{ role: "user", content: prompt }] }) },
  { api: "messages", path: "/v1/messages", body: (prompt: string) => ({ model: CHAT_MODEL, max_tokens: 60, stream: true, messages: [{ role: "user", content: prompt }] }) },
  { api: "responses", path: "/v1/responses", body: (prompt: string) => ({ model: CHAT_MODEL, max_output_tokens: 60, stream: true, input: prompt }) },
  { api: "gemini", path: `/v1beta/models/${CHAT_MODEL}:streamGenerateContent?alt=sse`, body: (prompt: string) => ({ contents: [{ role: "user", parts: [{ text: prompt }] }] }) },
])("a streamed hit under output rules ($api)", ({ api, path, body }) => {
  it("sends the miss's events, one for one, and the hit's record names the flag as the miss's does", async () => {
    await guardrails({ rules: [
      { name: "competitors", keywords: ["Globex"], on: ["output"], action: "flag" },
      { name: "no-secrets", keywords: ["launch code"], on: ["output"], action: "block" },
    ] });
    const prompt = `Describe your ${api} supply chain`;
    answers.set(`${api} supply chain`, "We buy most of our parts from Globex these days, and we ship them on to every store we run across the country by rail.");
    const ask = async () => {
      const res = await fetch(`${gw.url}/api${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${CACHE_ALWAYS}`, "x-api-key": CACHE_ALWAYS, "anthropic-version": "2023-06-01" },
        body: JSON.stringify(body(prompt)),
      });
      const text = await res.text();
      return { status: res.status, cache: res.headers.get("x-mg-cache"), id: res.headers.get("x-request-id"), events: text.split("\n").filter((l) => l.startsWith("data:") || l.startsWith("event:")) };
    };
    const miss = await ask();
    expect([miss.status, miss.cache]).toEqual([200, "miss"]);
    expect(miss.events.join("\n")).toContain("Globex");
    const hit = await ask();
    expect([hit.status, hit.cache]).toEqual([200, "hit"]);
    expect(hit.events).toEqual(miss.events);
    expect(await ledgerRecordOf(gw, miss.id)).toMatchObject({ guardrail: "flag:competitors" });
    expect(await ledgerRecordOf(gw, hit.id)).toMatchObject({ cacheHit: true, guardrail: "flag:competitors" });
  });
});

/** A stream's text up to its end, or up to where the gateway cut it (a failure after the error frame, on any protocol). */
async function readCut(res: Response): Promise<string> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  try {
    for (let r = await reader.read(); !r.done; r = await reader.read()) text += decoder.decode(r.value, { stream: true });
  } catch {
    // cut: what came before is the answer
  }
  return text;
}

// Output moderation judges a stream once it has all of it: at its protocol's last event, or (Gemini, which has none)
// after the provider's stream ended. Before the fix the recording was kept as soon as the provider's stream ended, so
// a Gemini stream the moderation then cut was kept and served as a hit (cut again, billed the hit price).
describe.each([
  { api: "chat", path: "/v1/chat/completions", body: (prompt: string) => ({ model: CHAT_MODEL, max_tokens: 60, stream: true, messages: [{ role: "user", content: prompt }] }) },
  { api: "messages", path: "/v1/messages", body: (prompt: string) => ({ model: CHAT_MODEL, max_tokens: 60, stream: true, messages: [{ role: "user", content: prompt }] }) },
  { api: "responses", path: "/v1/responses", body: (prompt: string) => ({ model: CHAT_MODEL, max_output_tokens: 60, stream: true, input: prompt }) },
  { api: "gemini", path: `/v1beta/models/${CHAT_MODEL}:streamGenerateContent?alt=sse`, body: (prompt: string) => ({ contents: [{ role: "user", parts: [{ text: prompt }] }] }) },
])("a stream the output moderation cuts ($api)", ({ api, path, body }) => {
  it("is not kept: asked again, it is a miss the provider answers and the moderation cuts again", async () => {
    await guardrails({ moderation: { provider: "up", on: ["output"] } });
    const prompt = `How do I stop a stuck ${api} job?`;
    answers.set(`stuck ${api} job`, "Find its process id, then kill it with signal nine.");
    const ask = async () => {
      const res = await fetch(`${gw.url}/api${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${CACHE_ALWAYS}`, "x-api-key": CACHE_ALWAYS, "anthropic-version": "2023-06-01" },
        body: JSON.stringify(body(prompt)),
      });
      return { status: res.status, cache: res.headers.get("x-mg-cache"), text: await readCut(res) };
    };
    const first = await ask();
    // The error event names the code; a Messages stream ends as a refusal naming the rule, without one.
    const refused = (text: string) => text.includes("blocked by guardrail");
    expect([first.status, first.cache, refused(first.text)]).toEqual([200, "miss", true]);
    const calls = completions();
    const again = await ask();
    expect([again.status, again.cache, refused(again.text)]).toEqual([200, "miss", true]);
    expect(completions()).toBe(calls + 1);
  });
});

describe("guardrails placed before the cache (an explicit pipeline)", () => {
  it("a hit is checked once: a failing moderation is not asked twice", async () => {
    const names = ["auth", "allowlist", "budget", "rate-limit", "idempotency", "guardrails", "response-cache", "cache-marker", "router", "fallback", "stream-transcoder", "usage-metering"];
    const shape = cacheConfig({ openai: openai.baseUrl, cohere: cohere.baseUrl, dir: mkdtempSync(join(tmpdir(), "mg-cache-guard-early-")) });
    (shape.projects.always as Record<string, unknown>).guardrails = { moderation: { provider: "up", on: ["input"], on_error: "fail_open" } };
    const early = await startTestGateway({ ...shape, pipeline: names });
    try {
      const ask = () => fetch(`${early.url}/api/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${CACHE_ALWAYS}` },
        body: JSON.stringify({ model: CHAT_MODEL, max_tokens: 30, messages: [{ role: "user", content: "moderation unavailable" }] }),
      });
      const moderations = () => openai.requests.filter((r) => r.path === "/v1/moderations").length;
      expect((await ask()).headers.get("x-mg-cache")).toBe("miss");
      const before = moderations();
      const hit = await ask();
      expect(hit.headers.get("x-mg-cache")).toBe("hit");
      expect(moderations()).toBe(before + 1);
    } finally {
      await early.close();
    }
  });
});
