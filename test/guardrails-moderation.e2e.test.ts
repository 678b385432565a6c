// Guardrail moderation end to end: a provider's OpenAI /moderations endpoint (a fake that answers as OpenAI does) and
// a catalog model as judge, on the request (every client protocol, JSON and streamed) and on the answer; the timeout
// with fail_closed (503, retryable) and fail_open (through, flagged); and each moderation call's own ledger record,
// billed to the project.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { SseParser } from "../core/sse/parse.ts";
import type { ServerResponse } from "node:http";
import { startFakeOpenAI, type FakeOpenAI, type RecordedRequest } from "./upstreams/openai.ts";
import { startTestGateway, keyEntry, postJson, testKey, type TestGateway } from "./helpers/gateway.ts";
import { KEY, OTHER, SANDBOX, policyConfig } from "./helpers/policy-config.ts";
import { ask, PROTOCOLS } from "./helpers/protocol-clients.ts";

const MODEL = "openai/gpt-4o-mini";
const JUDGED = testKey("judged");
const JUDGED_SANDBOX = testKey("judgedsb", true);
const CATEGORIES = ["harassment", "hate", "self-harm", "sexual", "violence", "illicit"];

/** OpenAI's /moderations: flagged when the input mentions "kill"; never answers when it says "slowly". */
function moderations(req: RecordedRequest, res: ServerResponse): boolean {
  if (req.path !== "/v1/moderations") return false;
  const input = String(req.body?.input ?? "");
  if (input.includes("slowly")) return true;
  const violent = input.includes("kill");
  const categories = Object.fromEntries(CATEGORIES.map((c) => [c, violent && c === "violence"]));
  const scores = Object.fromEntries(CATEGORIES.map((c) => [c, violent && c === "violence" ? 0.93 : 0.0001]));
  res.writeHead(200, { "content-type": "application/json", "x-request-id": "req_mod" });
  res.end(JSON.stringify({ id: "modr-123", model: "omni-moderation-2024-09-26", results: [{ flagged: violent, categories, category_scores: scores }] }));
  return true;
}

/** The judge (the chat fake, asked with the judge's system prompt): a JSON verdict, or prose when told to ramble. */
function judge(body: any): string | undefined {
  const system = body.messages?.[0]?.content;
  if (typeof system !== "string" || !system.includes("content moderation classifier")) return undefined;
  const text = JSON.stringify(body.messages[1]);
  if (text.includes("ramble")) return "I think this is probably fine, mostly.";
  return text.includes("kill") ? '{"flagged": true, "categories": ["violence"]}' : '{"flagged": false, "categories": []}';
}

let fake: FakeOpenAI;
let mod: FakeOpenAI;
let gw: TestGateway;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  fake.textFor = judge;
  fake.piecesFor = (body) => (JSON.stringify(body.messages).includes("story") ? ["Once the knight ", "came to kill the dragon."] : undefined);
  mod = await startFakeOpenAI();
  mod.hook = moderations;
  const config: any = policyConfig(fake.baseUrl, {
    store: { kind: "sqlite", path: "./gateway.db" },
    acme: {
      budget: { usd: "10" }, rate_limits: { rpm: 10_000, tpm: 50_000_000 },
      guardrails: { moderation: { provider: "mod", on: ["input", "output"], timeout_ms: 300, pricing: { input: "0.000001" } } },
    },
    other: { guardrails: { moderation: { provider: "mod", timeout_ms: 300, on_error: "fail_open" } } },
  });
  config.providers.mod = { protocol: "openai", base_url: mod.baseUrl, api_key: "sk-fake-upstream" };
  config.projects.judged = {
    keys: [keyEntry("kj", JUDGED), keyEntry("kj-sandbox", JUDGED_SANDBOX)],
    guardrails: { moderation: { judge: "openai/gpt-4o", categories: ["violence"] } },
  };
  gw = await startTestGateway(config);
});
afterAll(async () => {
  await gw?.close();
  await fake?.close();
  await mod?.close();
});

const modInputs = () => mod.requests.filter((r) => r.path === "/v1/moderations").map((r) => r.body.input);

describe.each(PROTOCOLS)("moderation endpoint on %s", (protocol) => {
  it.each([false, true])("refuses a flagged request (stream: %s) before the model is called, naming the categories", async (stream) => {
    const before = fake.requests.length;
    // Text of its own per case: the same text again would reuse the verdict (see "verdicts reused" below).
    const text = `how do I kill the neighbour's dog (${protocol}, stream: ${stream})`;
    const r = await ask(gw.url, KEY, protocol, MODEL, text, stream);
    expect(r.status, r.raw).toBe(400);
    expect(r.errorCode).toBe("GUARDRAIL_BLOCKED");
    expect(r.rule).toBe("moderation");
    expect(r.raw).toContain("violence");
    expect(fake.requests.length).toBe(before);
    // What was moderated: the latest user turn, not the system prompt.
    expect(modInputs().at(-1)).toBe(text);
  });

  it.each([false, true])("lets a clean request through and moderates the answer too (stream: %s)", async (stream) => {
    const r = await ask(gw.url, KEY, protocol, MODEL, "say hello", stream);
    expect(r.status).toBe(200);
    expect(r.errorCode).toBeUndefined();
    expect(r.text).toBe("Hello from the fake upstream, streaming word by word.");
    // The fake's answer is the same every time: judged once, its verdict reused after.
    expect(modInputs()).toContain("Hello from the fake upstream, streaming word by word.");
  });

  it.each([false, true])("stops a flagged answer (stream: %s)", async (stream) => {
    const r = await ask(gw.url, KEY, protocol, MODEL, "tell me a story", stream);
    expect(r.errorCode, r.raw).toBe("GUARDRAIL_BLOCKED");
    expect(r.rule).toBe("moderation");
    expect(r.status).toBe(stream ? 200 : 400);
    // Ended, not cut: a Gemini stream as Google's filters end one, a SAFETY candidate naming the rule before the
    // error frame (legacy clients that ignore the frame throw on it), which a client still reading gets whole.
    expect(r.cut ?? false).toBe(false);
    if (stream && protocol === "gemini") {
      expect(JSON.parse(r.events.at(-2)!.data).candidates[0]).toMatchObject({ finishReason: "SAFETY", finishMessage: 'The answer was blocked by guardrail "moderation"' });
    }
  });
});

describe("moderation failures and costs", () => {
  it("fail_closed: a moderation that does not answer in time is a 503 the client may retry, within the timeout", async () => {
    const t0 = Date.now();
    const r = await ask(gw.url, KEY, "chat", MODEL, "answer slowly please", false);
    expect(r.status).toBe(503);
    expect(r.errorCode).toBe("GUARDRAIL_UNAVAILABLE");
    expect(r.json.error.message).toContain("timed out");
    expect(Date.now() - t0).toBeLessThan(5_000);
  });

  it("fail_open: the request goes through, flagged in the ledger", async () => {
    const r = await ask(gw.url, OTHER, "chat", MODEL, "answer slowly please", false);
    expect(r.status).toBe(200);
    const last = (await gw.gateway.store.ledger({ project: "other" })).filter((e) => e.endpoint !== "moderation").at(-1)!;
    expect(last.guardrail).toBe("flag:moderation-unavailable");
  });

  it("every moderation call is a ledger record of its own, at the configured price", async () => {
    const entries = (await gw.gateway.store.ledger({ project: "acme" })).filter((e) => e.endpoint === "moderation");
    for (const e of entries) expect(e).toMatchObject({ model: "mod/omni-moderation-latest", provider: "mod" });
    const flagged = entries.filter((e) => e.guardrail === "block:moderation");
    // 8 requests of their own text; the 8 answers are the same story, judged (and billed) once.
    expect(flagged.length).toBe(9);
    // Answered calls: their estimated input tokens at the configured price. The one that timed out: nothing billed.
    for (const e of entries.filter((x) => x.status === 200)) expect(e).toMatchObject({ estimated: true, outcome: "ok", costPico: BigInt(e.inputTokens) * 1_000_000n });
    const timedOut = entries.filter((e) => e.status === 504);
    expect(timedOut).toHaveLength(1);
    expect(timedOut[0]).toMatchObject({ outcome: "error", costPico: 0n });
  });
});

describe("verdicts reused for the same text", () => {
  it("an agent's tool loop resending its user turn is moderated (and billed) once, a flagged one still refused", async () => {
    const calls = () => modInputs().length;
    const loop = (steps: number, ask: string) => {
      const messages: any[] = [{ role: "user", content: ask }];
      for (let i = 0; i < steps; i++) {
        messages.push({ role: "assistant", content: null, tool_calls: [{ id: `c${i}`, type: "function", function: { name: "lookup", arguments: "{}" } }] });
        messages.push({ role: "tool", tool_call_id: `c${i}`, content: `row ${i}` });
      }
      return { model: MODEL, messages };
    };
    const ask = "Find the unpaid invoices for ACME and remind each contact (tool loop)";
    const before = calls();
    for (let step = 0; step < 5; step++) {
      const r = await postJson(gw.url + "/api/v1/chat/completions", loop(step, ask), { authorization: `Bearer ${OTHER}` });
      expect(r.status, r.text).toBe(200);
    }
    expect(calls() - before).toBe(1);
    const billed = (await gw.gateway.store.ledger({ project: "other" })).filter((e) => e.endpoint === "moderation" && e.status === 200);
    expect(billed.filter((e) => e.generationId.endsWith(":moderation:input")).length).toBeGreaterThanOrEqual(1);
    // A flagged text stays refused without another call.
    const bad = "how do I kill the tool loop";
    for (let i = 0; i < 2; i++) {
      const r = await postJson(gw.url + "/api/v1/chat/completions", loop(i, bad), { authorization: `Bearer ${OTHER}` });
      expect(r.status).toBe(400);
      expect(r.text).toContain("GUARDRAIL_BLOCKED");
    }
    expect(calls() - before).toBe(2);
  });

  it("a moderation that failed is asked again on the next request (never remembered)", async () => {
    const before = modInputs().length;
    for (let i = 0; i < 2; i++) expect((await ask(gw.url, KEY, "chat", MODEL, "answer slowly again", false)).status).toBe(503);
    expect(modInputs().length - before).toBe(2);
  });
});

describe("a catalog model as judge", () => {
  it("refuses what it flags, in the configured categories, and bills the judge's tokens to the project", async () => {
    const r = await ask(gw.url, JUDGED, "messages", MODEL, "I will kill the build", false);
    expect(r.status).toBe(400);
    expect(r.rule).toBe("moderation");
    const ok = await ask(gw.url, JUDGED, "messages", MODEL, "hello there", false);
    expect(ok.status).toBe(200);
    const entries = (await gw.gateway.store.ledger({ project: "judged" })).filter((e) => e.endpoint === "moderation");
    expect(entries).toHaveLength(2);
    for (const e of entries) {
      expect(e).toMatchObject({ model: "openai/gpt-4o", provider: "up", estimated: false });
      expect(e.inputTokens).toBeGreaterThan(0);
      expect(e.costPico).toBeGreaterThan(0n);
    }
  });

  it("an answer that is not a verdict fails the moderation (fail_closed by default)", async () => {
    const r = await ask(gw.url, JUDGED, "chat", MODEL, "please ramble", false);
    expect(r.status).toBe(503);
    expect(r.errorCode).toBe("GUARDRAIL_UNAVAILABLE");
    const ledger = await gw.gateway.store.ledger({ project: "judged" });
    const request = ledger.filter((e) => e.endpoint !== "moderation").at(-1)!;
    // The request's record names the outage, not a content block by the moderation.
    expect(request).toMatchObject({ outcome: "blocked", status: 503, guardrail: "block:moderation-unavailable" });
    // The judge answered (prose): a failed call, billed for the tokens the provider charged for it.
    const call = ledger.find((e) => e.generationId === `${request.generationId}:moderation:input`)!;
    expect(call).toMatchObject({ status: 502, outcome: "error", estimated: false });
    expect(call.guardrail).toBeUndefined();
    expect(call.costPico).toBeGreaterThan(0n);
  });
});

describe("sandbox keys: no moderation call reaches a real provider", () => {
  const judgeCalls = () => fake.requests.filter((r) => JSON.stringify(r.body ?? {}).includes("content moderation classifier")).length;

  it.each([false, true])("a /moderations guardrail (fail_closed, input and output) is skipped, noted flag:moderation-skipped (stream: %s)", async (stream) => {
    const modBefore = mod.requests.length;
    const upBefore = fake.requests.length;
    const r = await ask(gw.url, SANDBOX, "chat", MODEL, "how do I kill the neighbour's dog", stream);
    expect(r.status, r.raw).toBe(200);
    expect(r.errorCode).toBeUndefined();
    expect(r.text).toContain("Simulated reply");
    expect(mod.requests.length).toBe(modBefore);
    expect(fake.requests.length).toBe(upBefore);
    const mine = (await gw.gateway.store.ledger({ project: "acme" })).filter((e) => e.keyId === "sandbox");
    expect(mine.filter((e) => e.endpoint === "moderation")).toEqual([]);
    expect(mine.at(-1)).toMatchObject({ provider: "sim", sandbox: true, costPico: 0n, guardrail: "flag:moderation-skipped" });
  });

  it("a judge model is not called either", async () => {
    const before = judgeCalls();
    const upBefore = fake.requests.length;
    const r = await ask(gw.url, JUDGED_SANDBOX, "messages", MODEL, "I will kill the build", false);
    expect(r.status, r.raw).toBe(200);
    expect(judgeCalls()).toBe(before);
    expect(fake.requests.length).toBe(upBefore);
    const mine = (await gw.gateway.store.ledger({ project: "judged" })).filter((e) => e.keyId === "kj-sandbox");
    expect(mine.map((e) => e.endpoint)).not.toContain("moderation");
    expect(mine.at(-1)).toMatchObject({ provider: "sim", sandbox: true, guardrail: "flag:moderation-skipped" });
    const metrics = await (await fetch(gw.metricsUrl!)).text();
    expect(metrics).toMatch(/gateway_guardrail_actions_total\{rule="moderation-skipped",action="flag"\} [1-9]/);
  });
});

describe("a Responses answer output moderation refused", () => {
  const headers = { "content-type": "application/json", authorization: `Bearer ${KEY}` };
  const status = async (path: string) => (await fetch(`${gw.url}/api/v1/responses/${path}`, { headers })).status;

  it.each([false, true])("is not kept: GET of its id is a 404 and no later turn continues from it (stream: %s)", async (stream) => {
    const put = vi.spyOn(gw.gateway.store.responses, "put");
    let id: string;
    try {
      const res = await fetch(`${gw.url}/api/v1/responses`, {
        method: "POST", headers, body: JSON.stringify({ model: MODEL, stream, input: `tell me a story (stored, stream: ${stream})` }),
      });
      const raw = await res.text();
      expect(raw).toContain("GUARDRAIL_BLOCKED");
      expect(res.status).toBe(stream ? 200 : 400);
      // Never written, not even for a moment (the record waits for the verdict).
      expect(put).not.toHaveBeenCalled();
      // The id the stream's response.created gave; a JSON client never saw one.
      id = stream ? JSON.parse(new SseParser().push(raw + "\n\n").find((e) => e.event === "response.created")!.data).response.id : "";
    } finally {
      put.mockRestore();
    }
    if (!stream) return;
    expect(id).toMatch(/^resp_/);
    expect(await status(id)).toBe(404);
    expect(await status(`${id}/input_items`)).toBe(404);
    const next = await fetch(`${gw.url}/api/v1/responses`, { method: "POST", headers, body: JSON.stringify({ model: MODEL, previous_response_id: id, input: "go on" }) });
    expect(next.status).toBe(404);
  });
});
