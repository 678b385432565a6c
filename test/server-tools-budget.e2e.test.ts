// A request with server tools (Claude's MCP connector, web search, web fetch, code execution) runs a tool loop on
// the provider's side within one call, each tool call another pass over the context, all in one usage. It reserved
// one context window of input while the meter let it settle at up to eleven (the review: a $2 key budget admitted an
// MCP request on a $1.20 hold and it settled at $5.40, spent 5.40 of 2). The reservation and the usage ceiling now
// read one rule (core/metering/server-tools.ts serverToolRounds): input for every model call the request allows, its
// own limit (max_uses) where it states one, and the output max_tokens allows the whole response once. On the shipped gateway.yaml and catalog
// (anthropic/claude-sonnet-4.5: 200k window; over 200k of input billed whole at $6/M in, $22.50/M out, 1-hour cache
// writes $12/M; $0.01 per search).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keyEntry, ledgerRecordOf, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { providerEnv, shippedConfig, SHIPPED_LIMITS } from "./helpers/shipped-config.ts";
import { sendJson, startFake, type FakeServer } from "./upstreams/http-fake.ts";
import { startFakeOpenAIResponses, type FakeOpenAIWithResponses } from "./upstreams/openai-responses.ts";
import { toPico } from "../core/money/money.ts";

const POOR = testKey("tools-poor");
const RICH = testKey("tools-rich");
const FREE = testKey("tools-free");
/** What Anthropic reports for the MCP loop: input far past the 200k window, as the reviewer's upstream did. */
const REPORTED_INPUT = 900_000;

let anthropic: FakeServer;
let openai: FakeOpenAIWithResponses;
let gw: TestGateway;
/** An answer the upstream holds back until the test has read the hold (set by `arrival`; else it answers at once). */
let arrived: ((release: () => void) => void) | undefined;
const arrival = () => new Promise<() => void>((resolve) => (arrived = resolve));

beforeAll(async () => {
  anthropic = await startFake((rec, res) => {
    const answer = () => sendJson(res, 200, {
      id: "msg_tools", type: "message", role: "assistant", model: rec.body.model, content: [{ type: "text", text: "Found it." }],
      stop_reason: "end_turn", stop_sequence: null, usage: { input_tokens: REPORTED_INPUT, output_tokens: 10 },
    });
    if (arrived) arrived(answer);
    else answer();
    arrived = undefined;
  }, (status) => ({ type: "error", error: { type: "api_error", message: `status ${status}` } }));
  openai = await startFakeOpenAIResponses();
  const config = shippedConfig({ openai: openai.baseUrl, anthropic: anthropic.origin });
  config.projects.poor = { keys: [keyEntry("poor", POOR)], budget: { usd: "2", period: "total" }, rate_limits: SHIPPED_LIMITS };
  config.projects.rich = { keys: [keyEntry("rich", RICH)], budget: { usd: "100", period: "total" }, rate_limits: SHIPPED_LIMITS };
  config.projects.free = { keys: [keyEntry("free", FREE)], rate_limits: SHIPPED_LIMITS };
  gw = await startTestGateway(config, { env: providerEnv(config) });
});
afterAll(async () => {
  await gw?.close();
  await anthropic?.close();
  await openai?.close();
});

const headers = (key: string) => ({ "x-api-key": key, "anthropic-version": "2023-06-01", "anthropic-beta": "mcp-client-2025-11-20" });
const ask = { model: "anthropic/claude-sonnet-4.5", max_tokens: 10, messages: [{ role: "user", content: "What do the docs say?" }] };
const mcp = { ...ask, mcp_servers: [{ type: "url", url: "https://docs.example.com/mcp", name: "docs" }], tools: [{ type: "mcp_toolset", mcp_server_name: "docs" }] };
const search = (max_uses?: number) => ({ ...ask, tools: [{ type: "web_search_20250305", name: "web_search", ...(max_uses === undefined ? {} : { max_uses }) }] });
const send = (body: unknown, key: string) => postJson(`${gw.baseURL}/messages`, body, headers(key));

/**
 * One model call's input at the long-prompt tier (the calls' input together is over 200k, billed as one usage): 200k
 * at the dearest input price (a 1-hour cache write, $12/M). Every call re-reads it.
 */
const CALL = 200_000n * toPico("0.000012");
/** The response's output, once however many calls it makes (max_tokens bounds them together): 10 at $22.50/M. */
const OUTPUT = 10n * toPico("0.0000225");
const SEARCH = toPico("0.01");

/** Sends `body` and, while the upstream holds its answer, reads what the project's budget holds for it. */
async function heldFor(body: unknown) {
  const upstream = arrival();
  const answer = send(body, RICH);
  const release = await Promise.race([upstream, answer.then((r) => Promise.reject(new Error(`answered ${r.status} before the upstream was called: ${r.text}`)))]);
  const held = await gw.gateway.store.reserved("rich", "total", Date.now());
  release();
  const r = await answer;
  expect(r.status).toBe(200);
  return { held, r, sent: anthropic.requests.at(-1)!.body };
}

describe("a budgeted request with server tools reserves every model call it allows", () => {
  it("an MCP connector request on a $2 budget is refused: eleven calls' input, and no field to lower it", async () => {
    const before = anthropic.requests.length;
    const r = await send(mcp, POOR);
    expect(r.status).toBe(402);
    expect(anthropic.requests.length).toBe(before);
    const { message, details } = r.json.error;
    expect(details).toMatchObject({ reason: "request_input_over_available", reserved_input: ["server_tools"], budget_usd: "2" });
    // The gateway's 10 rounds (Claude's MCP connector takes no limit of its own) and the first call.
    expect(toPico(details.request_max_usd)).toBe(11n * CALL + OUTPUT);
    expect(message).toContain(" at most, 11 model calls: one more for each call of its server tools it allows)");
    // The price it is reserved at is named (eaf59e7): the dearest input price, here the cache-write one.
    expect(message).toContain("so its input is reserved up to the model's context window for each model call at $");
    expect(message).toMatch(/per million tokens, its cache-write price \(input_cache_write(_1h)?\)[^;]*; raise the budget$/);
  });

  it("on a large budget it holds at least what it settles at", async () => {
    const { held, r } = await heldFor(mcp);
    expect(held).toBe(11n * CALL + OUTPUT);
    const record = await ledgerRecordOf(gw, r.headers.get("x-request-id"));
    expect(record.inputTokens).toBe(REPORTED_INPUT);
    // 900k input, over 200k: all of it at $6/M, and 10 output at $22.50/M.
    const cost = toPico(record.costUsd);
    expect(cost).toBe(900_000n * toPico("0.000006") + 10n * toPico("0.0000225"));
    expect(held).toBeGreaterThanOrEqual(cost);
  });

  it("a web search with max_uses 2 reserves three calls and two searches; one without is sent max_uses 10 and reserves eleven and ten", async () => {
    const two = await send(search(2), POOR);
    expect(two.status).toBe(402);
    expect(toPico(two.json.error.details.request_max_usd)).toBe(3n * CALL + OUTPUT + 2n * SEARCH);
    expect(two.json.error.message).toContain("set a smaller max_uses on its web_search and web_fetch tools (fewer calls, less reserved) or raise the budget");
    const open = await send(search(), POOR);
    expect(open.status).toBe(402);
    expect(toPico(open.json.error.details.request_max_usd)).toBe(11n * CALL + OUTPUT + 10n * SEARCH);
    // Admitted, it is sent with the limit its hold was counted for.
    const { held, sent } = await heldFor(search());
    expect(sent.tools[0].max_uses).toBe(10);
    expect(held).toBe(11n * CALL + OUTPUT + 10n * SEARCH);
  });
});

describe("a Responses mcp tool whose every call waits for approval", () => {
  // openai/gpt-5 (400k window, $1.25/M in, $10/M out), served natively: OpenAI runs the mcp tool and ends the
  // response at its first mcp_approval_request, so such a tool makes one model call.
  const mcpTool = (require_approval: unknown) => ({ type: "mcp", server_label: "docs", server_url: "https://docs.example.com/mcp", require_approval });
  const responses = (require_approval: unknown) => ({ model: "openai/gpt-5", input: "What do the docs say?", max_output_tokens: 1000, tools: [mcpTool(require_approval)] });
  const sendResponses = (body: unknown) => postJson(`${gw.baseURL}/responses`, body, { authorization: `Bearer ${POOR}` });
  /** One call's input, 400k at $1.25/M ($0.50), and one upstream call's 1000 output at $10/M ($0.01). */
  const GPT5_INPUT = 400_000n * toPico("0.00000125");
  const GPT5_OUTPUT = 1000n * toPico("0.00001");

  it("fits a $2 budget that holds one call: it is sent to the upstream and answered", async () => {
    for (const approval of ["always", { always: { tool_names: ["search"] } }]) {
      const before = openai.requests.length;
      const r = await sendResponses(responses(approval));
      expect(r.status, `${JSON.stringify(approval)}: ${r.text}`).toBe(200);
      expect(openai.requests.length).toBe(before + 1);
      expect(openai.requests.at(-1)!.body.tools[0].require_approval).toEqual(approval);
    }
  });

  it("one that may run a call unapproved is still held for every call the upstream's loop allows", async () => {
    const r = await sendResponses(responses("never"));
    expect(r.status).toBe(402);
    // OpenAI's loop: 11 passes over the input in one response (one output); or the gateway's own loop, were the
    // upstream not native: 8 turns (mcp.max_tool_rounds), each an upstream call with its own output.
    expect(toPico(r.json.error.details.request_max_usd)).toBe(11n * GPT5_INPUT + 8n * GPT5_OUTPUT);
    expect(r.json.error.message).toContain("11 model calls");
  });
});

describe("a server-tool limit that is not a whole number of calls", () => {
  // Read as the number of calls to reserve, 1e300 held "1e+300 model calls" at a 300-digit price, and on a key
  // without a budget went upstream with an unbounded usage ceiling; -1, "3" and 1.5 were read as no limit.
  const bad: unknown[] = [1e300, -1, "3", 1.5];

  it("Messages: max_uses is refused with a 400 naming the tool's field, whatever the budget, before any upstream call", async () => {
    for (const max_uses of bad) {
      for (const key of [POOR, FREE]) {
        const before = anthropic.requests.length;
        const r = await send({ ...ask, tools: [{ type: "web_fetch_20250910", name: "web_fetch", max_uses: 1 }, { type: "web_search_20250305", name: "web_search", max_uses }] }, key);
        expect(r.status, `${max_uses}: ${r.text}`).toBe(400);
        expect(r.json.error).toMatchObject({ type: "invalid_request_error", code: "INVALID_REQUEST", details: { field: "tools[1].max_uses" } });
        expect(anthropic.requests.length).toBe(before);
      }
    }
  });

  it("Responses: max_tool_calls is refused with a 400 naming it; null and whole numbers pass", async () => {
    const body = (max_tool_calls: unknown) => ({ model: "openai/gpt-5", input: "Weather?", max_output_tokens: 100, tools: [{ type: "web_search" }], max_tool_calls });
    for (const max_tool_calls of bad) {
      for (const key of [POOR, FREE]) {
        const before = openai.requests.length;
        const r = await postJson(`${gw.baseURL}/responses`, body(max_tool_calls), { authorization: `Bearer ${key}` });
        expect(r.status, `${max_tool_calls}: ${r.text}`).toBe(400);
        expect(r.json.error).toMatchObject({ code: "INVALID_REQUEST", param: "max_tool_calls" });
        expect(openai.requests.length).toBe(before);
      }
    }
    for (const max_tool_calls of [null, 0, 2]) {
      const r = await postJson(`${gw.baseURL}/responses`, body(max_tool_calls), { authorization: `Bearer ${FREE}` });
      expect(r.status, `${max_tool_calls}: ${r.text}`).toBe(200);
    }
  });
});
