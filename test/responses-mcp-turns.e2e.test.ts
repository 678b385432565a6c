// The Responses `mcp` tool over several model turns (a translated model, chat completions upstream): each turn is a
// model request of its own, with its own retry, for up to mcp.max_tool_rounds turns; and every turn that ran is
// billed, also when a later one fails (JSON and streamed); a server whose tools cannot be listed is a 502.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomUUID } from "node:crypto";
import { keyEntry, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { startMcpHttpServer, type TestMcpHttpServer } from "./mcp/http-server.ts";
import { until } from "./helpers/until.ts";

const KEY = testKey("mcpturns");
let openai: FakeOpenAI;
let docs: TestMcpHttpServer;
let gw: TestGateway;
/** Requests (by their place among the fake's requests, from 1) the fake answers with a 500. */
let failing: (n: number) => boolean = () => false;

beforeAll(async () => {
  openai = await startFakeOpenAI();
  docs = await startMcpHttpServer("docs");
  // The model calls docs__whoami until it has read ROUNDS=<n> results, then answers.
  openai.script = ({ tools, text }) => {
    const rounds = Number(/ROUNDS=(\d+)/.exec(text)?.[1] ?? 0);
    const read = text.split('"who":"docs"').length - 1;
    const tool = tools.find((t) => t.name === "docs__whoami");
    return tool && read < rounds ? { call: { name: tool.name, input: {} } } : { text: `read ${read} results` };
  };
  openai.hook = (req, res) => {
    if (!failing(openai.requests.length)) return false;
    res.writeHead(500, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: { message: "fake upstream failure 500", type: "server_error", param: null, code: null } }));
    return true;
  };
  const endpoint = { provider: "openai", model: "gpt-4o-mini", pricing: { input: "0.000001", output: "0.00001" } };
  gw = await startTestGateway({
    store: { kind: "sqlite", path: "./gateway.db" },
    providers: { openai: { protocol: "openai", base_url: openai.baseUrl, api_key: "sk-fake-upstream" } },
    // One model per test: a test's failures do not open the circuit of another's.
    models: {
      ...Object.fromEntries(["t/rounds", "t/retry", "t/fails", "t/fails-stream"].map((m) => [m, { type: "language", endpoints: [endpoint] }])),
      // A window each turn fits in, which the turns together exceed.
      "t/window": { type: "language", endpoints: [{ ...endpoint, context_window: 1200 }] },
    },
    routing: { backoff_ms: 10, max_backoff_ms: 20 },
    // Nothing listens on port 9 of loopback: a server whose tools cannot be listed.
    mcp_servers: { docs: { url: docs.url }, down: { url: "http://127.0.0.1:9/mcp", timeout_ms: 1000 } },
    mcp: { max_tool_rounds: 3 },
    projects: { p: { keys: [keyEntry("k", KEY)] } },
  });
}, 30_000);

afterAll(async () => {
  await gw?.close();
  await docs?.close();
  await openai?.close();
});

const tool = { type: "mcp", server_label: "docs", allowed_tools: ["whoami"], require_approval: "never" };

async function ask(model: string, rounds: number, stream = false, padding = "") {
  const requestId = `req_${randomUUID()}`;
  const res = await fetch(`${gw.baseURL}/responses`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json", "x-request-id": requestId },
    body: JSON.stringify({ model, input: `Ask whoami. ROUNDS=${rounds}${padding}`, tools: [tool], stream }),
  });
  const text = await res.text();
  const record = await until("the request's ledger record", async () =>
    (await gw.gateway.store.ledger({ project: "p" })).find((e) => e.requestId === requestId && e.endpoint === "responses"), 10_000);
  return { status: res.status, headers: res.headers, text, json: stream ? undefined : JSON.parse(text), record };
}

/** The prompt tokens the fake billed for its n-th request (from 1): what it reports in usage. */
const promptTokensOf = (n: number) => JSON.stringify(openai.requests[n - 1]!.body.messages ?? []).length >> 2;

describe("the Responses mcp tool over several model turns", () => {
  it("two tool rounds then the answer: three model turns, all billed", async () => {
    const from = openai.requests.length;
    const r = await ask("t/rounds", 2);
    expect(r.status, r.text).toBe(200);
    expect(r.json.output.map((o: any) => o.type)).toEqual(["mcp_list_tools", "mcp_call", "mcp_call", "message"]);
    expect(r.json.output.at(-1).content[0].text).toBe("read 2 results");
    expect(openai.requests.length - from).toBe(3);
    const input = [1, 2, 3].reduce((n, i) => n + promptTokensOf(from + i), 0);
    expect(r.json.usage.input_tokens).toBe(input);
    expect(r.record).toMatchObject({ status: 200, inputTokens: input });
  }, 30_000);

  it("turns that together exceed the context window are all billed, not capped at one turn's window", async () => {
    for (const stream of [false, true]) {
      const from = openai.requests.length;
      const r = await ask("t/window", 2, stream, ` ${"x".repeat(4000)}`);
      expect(r.status, r.text).toBe(200);
      const turns = [1, 2, 3].map((i) => promptTokensOf(from + i));
      expect(Math.max(...turns)).toBeLessThan(1200);
      const input = turns.reduce((a, b) => a + b, 0);
      expect(input).toBeGreaterThan(1200);
      expect(r.record).toMatchObject({ status: 200, inputTokens: input });
    }
  }, 30_000);

  it("streamed, two tool rounds: one response.completed after three model turns", async () => {
    const from = openai.requests.length;
    const r = await ask("t/rounds", 2, true);
    expect(r.status).toBe(200);
    expect(r.text).not.toContain("circuit open");
    const completed = r.text.split("\n").filter((l) => l.startsWith("data: ") && l.includes('"type":"response.completed"'));
    expect(completed).toHaveLength(1);
    const final = JSON.parse(completed[0]!.slice(6)).response;
    expect(final.output.map((o: any) => o.type)).toEqual(["mcp_list_tools", "mcp_call", "mcp_call", "message"]);
    expect(openai.requests.length - from).toBe(3);
    expect(r.record.inputTokens).toBe([1, 2, 3].reduce((n, i) => n + promptTokensOf(from + i), 0));
  }, 30_000);

  it("a later turn's failed upstream call is retried, as the first turn's would be", async () => {
    const from = openai.requests.length;
    failing = (n) => n === from + 2; // the second turn's first try
    try {
      const r = await ask("t/retry", 1);
      expect(r.status, r.text).toBe(200);
      expect(r.json.output.at(-1).content[0].text).toBe("read 1 results");
      expect(openai.requests.length - from).toBe(3);
      // The record lists every turn's attempts: the first, the failed try, its retry.
      expect(r.record.attempts).toBe(3);
    } finally {
      failing = () => false;
    }
  }, 30_000);

  it("a later turn that fails: the 502 bills the turn that ran, and its x-mg-cost-usd says so", async () => {
    const from = openai.requests.length;
    failing = (n) => n > from + 1; // every try of the second turn
    try {
      const r = await ask("t/fails", 1);
      expect(r.status).toBe(502);
      expect(openai.requests.length - from).toBe(3); // the first turn, the second's try and retry
      expect(r.record).toMatchObject({ status: 502, inputTokens: promptTokensOf(from + 1) });
      expect(r.record.inputTokens).toBeGreaterThan(0);
      // The answer says what was billed, as a JSON answer does: the turn that ran is not free.
      expect(r.headers.get("x-mg-cost-usd")).toBe(r.record.costUsd);
      expect(Number(r.record.costUsd)).toBeGreaterThan(0);
      // The message counts the failing turn's attempts, and says which turn: the record lists all three.
      expect(r.json.error.message).toMatch(/^model turn 2: All 2 attempts failed/);
    } finally {
      failing = () => false;
    }
  }, 30_000);

  it("streamed, a later turn that fails: the stream error's record bills the turn that ran", async () => {
    const from = openai.requests.length;
    failing = (n) => n > from + 1;
    try {
      const r = await ask("t/fails-stream", 1, true);
      expect(r.status).toBe(200);
      expect(r.text).toContain("response.mcp_call.completed");
      expect(r.text).not.toContain("response.completed");
      expect(r.record.outcome).toBe("stream_error");
      expect(r.record.inputTokens).toBe(promptTokensOf(from + 1)); // as the upstream reported it, not an estimate
    } finally {
      failing = () => false;
    }
  }, 30_000);

  it("a server whose tools cannot be listed: 502 UPSTREAM_ERROR naming the tool, no model call", async () => {
    const from = openai.requests.length;
    const res = await fetch(`${gw.baseURL}/responses`, {
      method: "POST",
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "t/rounds", input: "hi", tools: [{ type: "mcp", server_label: "down", require_approval: "never" }] }),
    });
    const body = await res.json();
    expect(res.status).toBe(502);
    expect(body.error).toMatchObject({ code: "UPSTREAM_ERROR" });
    expect(body.error.message).toMatch(/^tools\[0\]: listing the tools of MCP server "down" failed/);
    expect(openai.requests.length).toBe(from);
  }, 30_000);
});
