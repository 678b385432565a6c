// Claude's MCP connector (Messages `mcp_servers`, with or without the beta `mcp_toolset` tool) runs its tool loop on
// Anthropic's side within one call, and the tools' results are input the request body does not bound, as a web
// search's are. Such a request was billed at most one context window of input (an Anthropic answer of 900k input
// tokens on a 200k model billed as 200k) and reserved on its body alone; it is now a request using server tools:
// billed as the upstream reports, its input reserved up to the context window for every model call its loop may make
// (test/server-tools-budget.e2e.test.ts on the shipped config).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keyEntry, ledgerRecordOf, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { sendJson, startFake, type FakeServer } from "./upstreams/http-fake.ts";

const RICH = testKey("mcp-rich");
/** One small budget per MCP form, so that one served (before the fix) cannot refuse the other for its spend. */
const POOR = { mcpToolset: testKey("mcp-poor-toolset"), mcpServersAlone: testKey("mcp-poor-servers") };
/** What the fake reports for every call: input far past the model's 200k window, as a long MCP tool loop can add. */
const REPORTED_INPUT = 900_000;
const REPORTED_OUTPUT = 10;

let anthropic: FakeServer;
let gw: TestGateway;

beforeAll(async () => {
  anthropic = await startFake((rec, res) => {
    sendJson(res, 200, {
      id: "msg_mcp", type: "message", role: "assistant", model: rec.body.model, content: [{ type: "text", text: "Found it in the docs." }],
      stop_reason: "end_turn", stop_sequence: null, usage: { input_tokens: REPORTED_INPUT, output_tokens: REPORTED_OUTPUT },
    });
  }, (status) => ({ type: "error", error: { type: "api_error", message: `status ${status}` } }));
  gw = await startTestGateway({
    store: { kind: "sqlite", path: "./gateway.db" },
    providers: { anthropic: { protocol: "anthropic", base_url: anthropic.origin, api_key: "sk-ant-fake" } },
    models: {
      "custom/claude": { type: "language", context_window: 200_000, max_tokens: 64_000, endpoints: [{ provider: "anthropic", model: "claude-sonnet-4-5", pricing: { input: "0.000003", output: "0.000015" } }] },
    },
    projects: {
      rich: { keys: [keyEntry("rich", RICH)], budget: { usd: "1000", period: "month" } },
      "poor-toolset": { keys: [keyEntry("poor-toolset", POOR.mcpToolset)], budget: { usd: "0.01", period: "month" } },
      "poor-servers": { keys: [keyEntry("poor-servers", POOR.mcpServersAlone)], budget: { usd: "0.01", period: "month" } },
    },
  });
});
afterAll(async () => {
  await gw?.close();
  await anthropic?.close();
});

const headers = (key: string, beta?: string) => ({ authorization: `Bearer ${key}`, "anthropic-version": "2023-06-01", ...(beta ? { "anthropic-beta": beta } : {}) });
const docs = [{ type: "url", url: "https://docs.example.com/mcp", name: "docs" }];
const ask = { model: "custom/claude", max_tokens: 10, messages: [{ role: "user", content: "What do the docs say about limits?" }] };
const requests = {
  webSearch: { body: { ...ask, tools: [{ type: "web_search_20250305", name: "web_search", max_uses: 5 }] } },
  mcpToolset: { body: { ...ask, mcp_servers: docs, tools: [{ type: "mcp_toolset", mcp_server_name: "docs" }] }, beta: "mcp-client-2025-11-20" },
  mcpServersAlone: { body: { ...ask, mcp_servers: docs }, beta: "mcp-client-2025-04-04" },
  customTool: { body: { ...ask, tools: [{ name: "lookup", input_schema: { type: "object", properties: {} } }] } },
};
const send = (which: keyof typeof requests, key: string) => postJson(`${gw.baseURL}/messages`, requests[which].body, headers(key, (requests[which] as { beta?: string }).beta));

/** 900k input at $3/M and 10 output at $15/M; one 200k window's worth of input instead. */
const AS_REPORTED = "2.70015";
const ONE_WINDOW = "0.60015";

describe("Claude's MCP connector", () => {
  it.each(["mcpToolset", "mcpServersAlone"] as const)("%s: billed the input Anthropic reports, as web search is", async (which) => {
    const search = await send("webSearch", RICH);
    expect(search.status).toBe(200);
    expect(search.headers.get("x-mg-cost-usd")).toBe(AS_REPORTED);
    const r = await send(which, RICH);
    expect(r.status).toBe(200);
    expect(anthropic.requests.at(-1)!.body.mcp_servers).toEqual(docs);
    expect(r.headers.get("x-mg-cost-usd")).toBe(AS_REPORTED);
    const e = await ledgerRecordOf(gw, r.headers.get("x-request-id"));
    expect(e.inputTokens).toBe(REPORTED_INPUT);
    expect(e.costUsd).toBe(AS_REPORTED);
  });

  it("a request with only its own tools is still held to one context window (its input is all in the body)", async () => {
    const r = await send("customTool", RICH);
    expect(r.status).toBe(200);
    expect(r.headers.get("x-mg-cost-usd")).toBe(ONE_WINDOW);
  });

  it.each(["mcpToolset", "mcpServersAlone"] as const)("%s: a budget reserves a context window of input for every model call its loop may make", async (which) => {
    const search = await send("webSearch", POOR[which]);
    expect(search.status).toBe(402);
    const before = anthropic.requests.length;
    const r = await send(which, POOR[which]);
    expect(r.status).toBe(402);
    expect(anthropic.requests.length).toBe(before);
    expect(r.json.error.details.reserved_input).toEqual(["server_tools"]);
    // Each call 200k tokens of context at $3/M (no web_search price here), and the response's 10 output at $15/M once:
    // max_tokens bounds all its passes together. The connector takes no limit: the gateway's 10 rounds and the first
    // call; web search's max_uses 5: 6 calls.
    expect(r.json.error.details.request_max_usd).toBe("6.60015");
    expect(search.json.error.details.request_max_usd).toBe("3.60015");
    // Billed as reported above (900k): within what it reserved.
    expect(Number(r.json.error.details.request_max_usd)).toBeGreaterThanOrEqual(Number(AS_REPORTED));
  });
});
