// A request the guardrails redact is neither answered from nor kept in the response cache. A kept answer could only
// be the raw one (holding the values redaction exists to keep out of stores) or the masked one (then other output
// rules, moderation and the restoring of placeholders cannot see on a hit what they saw on the miss). Before the fix
// the cache kept masked answers: a reload adding an output block rule on e-mails left the hit a 200 with the masked
// answer where a new wording was 400, and a flag rule before the redact rule was in the miss's ledger record, not the
// hit's. Read from the store itself: no such answer is kept. Shipped shape: SQLite store, the default pipeline and one
// placing guardrails before the cache, `cache: {mode: always}`, rules changed by live reloads.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import YAML from "yaml";
import Database from "better-sqlite3";
import { ledgerRecordOf, startTestGateway, type TestGateway } from "./helpers/gateway.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { startFakeCohere, type Reranker } from "./upstreams/rerankers.ts";
import { CACHE_ALWAYS, CACHE_KEY, CHAT_MODEL, cacheConfig, optIn } from "./helpers/cache-config.ts";

/** Guardrails first, then the cache: they have redacted the request before the lookup. */
const GUARDRAILS_FIRST = ["auth", "allowlist", "budget", "rate-limit", "idempotency", "guardrails", "response-cache", "cache-marker", "router", "fallback", "stream-transcoder", "usage-metering"];
const OUTSIDER = "ops-admin@internal.corp";

const RULES = {
  "input redaction": { rules: [{ name: "pii", detect: ["email"], on: ["input"], action: "redact" }] },
  "output redaction": { rules: [{ name: "pii", detect: ["email"], on: ["output"], action: "redact" }] },
  "redaction both ways": { rules: [{ name: "pii", detect: ["email"], on: ["input", "output"], action: "redact" }] },
} as const;

/** What the client gets under each: its own e-mail restored (or masked), the model's own one masked or not. */
const expected = (rules: keyof typeof RULES, who: string) => ({
  "input redaction": `I will write to ${who} today, cc ${OUTSIDER}.`,
  "output redaction": "I will write to [REDACTED:EMAIL] today, cc [REDACTED:EMAIL].",
  "redaction both ways": `I will write to ${who} today, cc [REDACTED:EMAIL].`,
})[rules];

let openai: FakeOpenAI;
let cohere: Reranker;
const gateways: Record<string, { gw: TestGateway; config: ReturnType<typeof cacheConfig> }> = {};

async function start(name: string, pipeline?: string[]) {
  const config = cacheConfig({ openai: openai.baseUrl, cohere: cohere.baseUrl, dir: mkdtempSync(join(tmpdir(), `mg-cache-redact-${name}-`)) });
  gateways[name] = { config, gw: await startTestGateway(pipeline ? { ...config, pipeline } : config) };
}

beforeAll(async () => {
  openai = await startFakeOpenAI();
  // The model writes back the e-mail it was shown (its placeholder, when redacted) and one of its own.
  openai.textFor = (body) => {
    if (JSON.stringify(body.messages).includes("marker")) return "Marker kept.";
    const owner = ownerIn(body);
    if (owner) return `The owner is ${owner}.`;
    return `I will write to ${/\[EMAIL_\d+\]|[\w.-]+@[\w.]+/.exec(JSON.stringify(body.messages))?.[0] ?? "nobody"} today, cc ${OUTSIDER}.`;
  };
  cohere = await startFakeCohere();
  await start("default order");
  await start("guardrails before the cache", GUARDRAILS_FIRST);
});
afterAll(async () => {
  for (const { gw } of Object.values(gateways)) await gw.close();
  await openai?.close();
  await cohere?.close();
});

/** The `always` project's guardrails on one gateway, by a live reload (undefined: none). */
async function guardrails(on: string, g: Record<string, unknown> | undefined): Promise<void> {
  const { gw, config } = gateways[on]!;
  const projects = config.projects as Record<string, Record<string, unknown>>;
  if (g) projects.always!.guardrails = g;
  else delete projects.always!.guardrails;
  writeFileSync(gw.configFile, YAML.stringify(config));
  expect(await gw.gateway.reload()).toMatchObject({ ok: true });
}

/** Every answer in the gateway's SQLite store. */
function storeValues(gw: TestGateway): string[] {
  const db = new Database((gw.gateway.config.raw.store as { path: string }).path, { readonly: true });
  try {
    return (db.prepare("SELECT value FROM response_cache").all() as { value: string }[]).map((r) => r.value);
  } finally {
    db.close();
  }
}

/**
 * What the store has kept since it held `before`, read once a request of a project without guardrails (asked last)
 * has been kept: the cache writes in the background, in the order the answers were made.
 */
async function keptSince(gw: TestGateway, before: string[]): Promise<string[]> {
  const marker = `marker ${Math.random()}`;
  const res = await fetch(`${gw.url}/api/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${CACHE_KEY}` },
    body: JSON.stringify({ model: CHAT_MODEL, max_tokens: 40, messages: [{ role: "user", content: marker }], ...optIn() }),
  });
  expect([res.status, res.headers.get("x-mg-cache")]).toEqual([200, "miss"]);
  await res.text();
  for (let i = 0; i < 200; i++) {
    const added = storeValues(gw).filter((v) => !before.includes(v));
    if (added.length) return added;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error("the marker was never kept");
}

function textOf(body: string, stream: boolean): string {
  if (!stream) return JSON.parse(body).choices?.[0]?.message?.content;
  let text = "";
  for (const line of body.split("\n")) if (line.startsWith("data: {")) text += JSON.parse(line.slice(6)).choices?.[0]?.delta?.content ?? "";
  return text;
}

async function chat(on: string, prompt: string, stream = false) {
  const res = await fetch(`${gateways[on]!.gw.url}/api/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${CACHE_ALWAYS}` },
    body: JSON.stringify({ model: CHAT_MODEL, max_tokens: 40, messages: [{ role: "user", content: prompt }], ...(stream ? { stream } : {}) }),
  });
  const body = await res.text();
  return { status: res.status, cache: res.headers.get("x-mg-cache"), id: res.headers.get("x-request-id"), text: res.status === 200 ? textOf(body, stream) : body };
}

const completions = () => openai.requests.filter((r) => r.path === "/v1/chat/completions").length;

describe.each(
  (["default order", "guardrails before the cache"] as const).flatMap((order) =>
    (Object.keys(RULES) as (keyof typeof RULES)[]).flatMap((rules) => [false, true].map((stream) => ({ order, rules, stream })))),
)("$rules, $order, stream: $stream", ({ order, rules, stream }) => {
  it("each request is answered by the provider, with no x-mg-cache header, and nothing of it is kept", async () => {
    await guardrails(order, RULES[rules]);
    const who = `${rules.split(" ")[0]}-${order.split(" ")[0]}-${stream ? "s" : "j"}-olga@example.org`;
    const prompt = `Please email ${who} about the refund`;
    const { gw } = gateways[order]!;
    const before = storeValues(gw);
    const calls = completions();
    for (let i = 0; i < 2; i++) {
      const r = await chat(order, prompt, stream);
      expect([r.status, r.cache, r.text]).toEqual([200, null, expected(rules, who)]);
    }
    expect(completions()).toBe(calls + 2);
    const kept = await keptSince(gw, before);
    expect(kept).toHaveLength(1); // the marker's answer alone
    expect(kept[0]).toContain("Marker kept.");
    expect(storeValues(gw).some((v) => v.includes(who) || v.includes("[EMAIL_") || v.includes("[REDACTED:"))).toBe(false);
  });
});

describe("a project's redact rules, changed by reloads", () => {
  it("an answer kept before a redact rule is not served while the rule is there, and is again once it is gone", async () => {
    const prompt = "Please email before-olga@example.org about the refund";
    await guardrails("default order", undefined);
    expect((await chat("default order", prompt)).cache).toBe("miss");
    expect((await chat("default order", prompt)).cache).toBe("hit");
    await guardrails("default order", RULES["output redaction"]);
    const calls = completions();
    const redacted = await chat("default order", prompt);
    expect([redacted.cache, redacted.text]).toEqual([null, expected("output redaction", "")]);
    expect(completions()).toBe(calls + 1);
    await guardrails("default order", undefined);
    const plain = await chat("default order", prompt);
    expect([plain.cache, plain.text]).toEqual(["hit", `I will write to before-olga@example.org today, cc ${OUTSIDER}.`]);
  });

  it("an output block rule added beside a redact rule refuses the request again, as it refuses a new wording", async () => {
    const prompt = "Please email block-olga@example.org about the refund";
    await guardrails("default order", RULES["redaction both ways"]);
    expect((await chat("default order", prompt)).status).toBe(200);
    await guardrails("default order", { rules: [...RULES["redaction both ways"].rules, { name: "no-mail-out", detect: ["email"], on: ["output"], action: "block" }] });
    for (const p of [prompt, "So, write to block-olga@example.org about the refund"]) {
      const r = await chat("default order", p);
      expect(r.status).toBe(400);
      expect(JSON.parse(r.text).error).toMatchObject({ code: "GUARDRAIL_BLOCKED", details: { rule: "no-mail-out", on: "output" } });
    }
  });

  it("a flag rule listed before the redact rule is in every request's ledger record, the second as the first", async () => {
    await guardrails("default order", { rules: [
      { name: "seen", detect: ["email"], on: ["output"], action: "flag" },
      { name: "pii", detect: ["email"], on: ["output"], action: "redact" },
    ] });
    const prompt = "Please email flag-olga@example.org about the refund";
    for (let i = 0; i < 2; i++) {
      const r = await chat("default order", prompt);
      expect([r.status, r.cache]).toEqual([200, null]);
      expect(await ledgerRecordOf(gateways["default order"]!.gw, r.id)).toMatchObject({ outcome: "ok", guardrail: "flag:seen,redact:pii" });
    }
  });
});

/** The owner a tool input named (a placeholder, as the model sees it), or undefined when none did. */
function ownerIn(body: any): string | undefined {
  for (const m of body.messages ?? []) for (const tc of m.tool_calls ?? []) {
    const owner = JSON.parse(tc.function?.arguments ?? "{}").owner;
    if (owner) return owner;
  }
  return undefined;
}

describe("a tool input's e-mails under input redaction", () => {
  /** A Messages request whose tool_use input has these members, in this order. */
  async function ask(input: Record<string, string>) {
    const res = await fetch(`${gateways["default order"]!.gw.url}/api/v1/messages`, {
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
    return { status: res.status, text: res.status === 200 ? JSON.parse(body).content?.[0]?.text : body };
  }

  it("the same members in another order are answered with the owner's own e-mail", async () => {
    await guardrails("default order", RULES["input redaction"]);
    expect(await ask({ owner: "olivia@corp.com", customer: "carl@client.com" })).toEqual({ status: 200, text: "The owner is olivia@corp.com." });
    expect(await ask({ customer: "carl@client.com", owner: "olivia@corp.com" })).toEqual({ status: 200, text: "The owner is olivia@corp.com." });
  });
});
