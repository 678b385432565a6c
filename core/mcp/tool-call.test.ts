import { describe, expect, it } from "vitest";
import { Registry } from "prom-client";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { runToolCall, UnknownToolError, type ToolCaller } from "./tool-call.ts";
import { ConnectFailedError, NotConnectedError, type Upstream } from "./upstream.ts";
import { MemoryStore } from "../store/memory.ts";
import type { LedgerEntry } from "../store/types.ts";
import { healthOf } from "../health/index.ts";
import { ErrorAnswer } from "./error-answers.ts";

/** A caller of project p (allow_tools as given) on a gateway with one server, files; what it records and logs. */
function setup(allowTools?: string[]) {
  const ledger: LedgerEntry[] = [];
  const lines: Array<Record<string, unknown>> = [];
  const registry = new Registry();
  const project = { keys: [{ id: "k" }], mcp: allowTools ? { allow_tools: allowTools } : undefined };
  const config = { raw: { mcp_servers: { files: { command: "x" } } }, disabledProviders: new Set(), projects: new Map([["p", { config: project }]]) };
  const gateway = {
    config,
    startConfig: config,
    metrics: { registry },
    store: { record: async (e: LedgerEntry) => { ledger.push(e); } },
    log: { enabled: () => true, info: (_m: string, f: Record<string, unknown>) => lines.push(f), warn() {}, error() {}, debug() {} },
  };
  const caller = { gateway, config, requestId: "r", auth: { projectId: "p", keyId: "k", sandbox: false, project: { config: project } } } as unknown as ToolCaller;
  return { caller, registry, ledger, lines };
}

/** What every fake upstream has of a real one's settings: the name check waits for its list at most its timeout_ms. */
const spec = { timeoutMs: 60_000 };

/** An upstream listing `names` (one list, cached as a real one's is); the names it was called with. */
function fakeUpstream(names: string[]) {
  const called: string[] = [];
  const list = Promise.resolve(names.map((name) => ({ name, inputSchema: { type: "object" } }) as Tool));
  const u = {
    spec,
    tools: () => list,
    goesOnLastNames: () => false, listsTool: (n: string) => names.includes(n),
    call: async (n: string) => { called.push(n); return { content: [{ type: "text", text: "done" }] }; },
  };
  return { upstream: u as unknown as Upstream, called };
}

const callSeries = async (r: Registry) => (await r.metrics()).split("\n").filter((l) => l.startsWith("gateway_mcp_tool_calls_total{"));

describe("runToolCall on a server of gateway.yaml", () => {
  it("a name the server does not list is never sent upstream nor a series of its own (Responses: a failed call)", async () => {
    const { caller, registry, ledger } = setup();
    const { upstream, called } = fakeUpstream(["add"]);
    for (let i = 0; i < 10; i++) {
      const r = await runToolCall(caller, upstream, { server: "files", tool: `made-up-${i}-${"x".repeat(5000)}`, via: "responses" });
      expect(r.isError).toBe(true);
      expect((r.content[0] as { text: string }).text).toMatch(/^Unknown tool: files__made-up-/);
    }
    expect(called).toEqual([]);
    expect(ledger).toEqual([]);
    expect(await callSeries(registry)).toEqual(['gateway_mcp_tool_calls_total{server="files",tool="(unknown)",status="unknown_tool"} 10']);
    // On the MCP endpoint the same refusal is the JSON-RPC error the session sends (-32602).
    await expect(runToolCall(caller, upstream, { server: "files", tool: "nope", via: "mcp" })).rejects.toBeInstanceOf(UnknownToolError);
    // A listed tool runs and counts under its own name.
    expect((await runToolCall(caller, upstream, { server: "files", tool: "add", via: "responses" })).isError).toBeUndefined();
    expect(called).toEqual(["add"]);
    expect(await callSeries(registry)).toContain('gateway_mcp_tool_calls_total{server="files",tool="add",status="ok"} 1');
  });

  it("a tool outside the project's allow_tools is not run, whoever names it (a Responses approval item included)", async () => {
    const { caller } = setup(["files__add"]);
    const { upstream, called } = fakeUpstream(["add", "crash"]);
    const r = await runToolCall(caller, upstream, { server: "files", tool: "crash", via: "responses" });
    expect((r.content[0] as { text: string }).text).toBe("Unknown tool: files__crash");
    expect(called).toEqual([]);
  });
});

describe("runToolCall on a server that cannot be reached", () => {
  it("is unavailable, never a ledger row (whatever tool the client names) nor a timeout; a call that timed out on the server is", async () => {
    const { caller, registry, ledger } = setup();
    // An HTTP server that does not answer at connect: ready() gives up after timeout_ms.
    const hanging = { spec, tools: async () => { throw new NotConnectedError('connecting to MCP server "files" took longer than 2000 ms'); }, goesOnLastNames: () => false, listsTool: () => false } as unknown as Upstream;
    const r = await runToolCall(caller, hanging, { server: "files", tool: "anything_i_like", via: "responses" });
    expect((r.content[0] as { text: string }).text).toMatch(/^MCP server "files" is not available: connecting .* took longer than 2000 ms/);
    // The SDK's own error for a client whose connection is gone (a local server not restarted yet).
    const gone = { spec, tools: async () => [{ name: "add", inputSchema: { type: "object" } }], goesOnLastNames: () => false, listsTool: () => true, call: async () => { throw new Error("Not connected"); } } as unknown as Upstream;
    expect((await runToolCall(caller, gone, { server: "files", tool: "add", via: "mcp" })).isError).toBe(true);
    expect(ledger).toEqual([]);
    expect(await callSeries(registry)).toEqual([
      'gateway_mcp_tool_calls_total{server="files",tool="(unknown)",status="unavailable"} 1',
      'gateway_mcp_tool_calls_total{server="files",tool="add",status="unavailable"} 1',
    ]);
    // A call the server got and did not answer in time is a 504 row.
    const slow = { spec, tools: async () => [{ name: "add", inputSchema: { type: "object" } }], goesOnLastNames: () => false, listsTool: () => true, call: async () => { throw new Error("MCP error -32001: Request timed out"); } } as unknown as Upstream;
    await runToolCall(caller, slow, { server: "files", tool: "add", via: "mcp" });
    expect(ledger).toMatchObject([{ provider: "files", model: "add", status: 504 }]);
  });
});

describe("runToolCall and the key's tool_calls_per_minute", () => {
  it("a call to a server that could not be reached does not use up the rate; calls that reach it do", async () => {
    const { caller } = setup();
    const project = (caller.auth.project.config as any);
    project.rate_limits = { tool_calls_per_minute: 2 };
    const store = new MemoryStore();
    (caller.gateway as any).store = { rateLimit: store.rateLimit.bind(store), rateAdjust: store.rateAdjust.bind(store), record: async () => {} };
    const down = { spec, tools: async () => { throw new NotConnectedError('could not connect to MCP server "files": spawn node ENOENT'); }, goesOnLastNames: () => false, listsTool: () => false } as unknown as Upstream;
    // Four (a fifth failure in a row would open the server's circuit).
    for (let i = 0; i < 4; i++) {
      const r = await runToolCall(caller, down, { server: "files", tool: "add", via: "responses" });
      expect((r.content[0] as { text: string }).text).toContain("could not connect");
    }
    const { upstream, called } = fakeUpstream(["add"]);
    expect((await runToolCall(caller, upstream, { server: "files", tool: "add", via: "responses" })).isError).toBeUndefined();
    expect((await runToolCall(caller, upstream, { server: "files", tool: "add", via: "responses" })).isError).toBeUndefined();
    const third = await runToolCall(caller, upstream, { server: "files", tool: "add", via: "responses" });
    expect((third.content[0] as { text: string }).text).toMatch(/^Rate limit reached \(tool_calls_per_minute: 2\)/);
    expect(called).toEqual(["add", "add"]);
  });
});

describe("runToolCall, unknown tools and the key's tool_calls_per_minute", () => {
  it("a name the server does not list is refused without using up the rate", async () => {
    const { caller } = setup();
    (caller.auth.project.config as any).rate_limits = { tool_calls_per_minute: 2 };
    const store = new MemoryStore();
    (caller.gateway as any).store = { rateLimit: store.rateLimit.bind(store), rateAdjust: store.rateAdjust.bind(store), record: async () => {} };
    const { upstream, called } = fakeUpstream(["add"]);
    for (let i = 0; i < 30; i++) {
      const r = await runToolCall(caller, upstream, { server: "files", tool: `nope${i}`, via: "responses" });
      expect((r.content[0] as { text: string }).text).toBe(`Unknown tool: files__nope${i}`);
    }
    expect((await runToolCall(caller, upstream, { server: "files", tool: "add", via: "responses" })).isError).toBeUndefined();
    expect((await runToolCall(caller, upstream, { server: "files", tool: "add", via: "responses" })).isError).toBeUndefined();
    expect(called).toEqual(["add", "add"]);
  });
});

describe("runToolCall on a client's own server (server_url)", () => {
  it("calls the tool by its full name; the ledger and the log keep it cut short, metrics a fixed label", async () => {
    const { caller, registry, ledger, lines } = setup();
    const long = "t".repeat(20_000);
    const label = "s".repeat(20_000);
    const { upstream, called } = fakeUpstream([long]);
    await runToolCall(caller, upstream, { server: label, tool: long, via: "responses", metricServer: "(client_url)" });
    expect(called).toEqual([long]);
    expect(ledger[0]!.model.length).toBeLessThanOrEqual(129);
    expect(ledger[0]!.provider.length).toBeLessThanOrEqual(129);
    const line = lines.find((l) => l.via === "responses")!;
    expect(String(line.tool).length).toBeLessThanOrEqual(129);
    expect(String(line.server).length).toBeLessThanOrEqual(129);
    expect(await callSeries(registry)).toEqual(['gateway_mcp_tool_calls_total{server="(client_url)",tool="(client_url)",status="ok"} 1']);
  });

  it("records the call apart from every provider and model of the operator's, whatever the client names them", async () => {
    const { caller, ledger } = setup();
    // The audit's spoof: a client server labelled like a provider, listing a tool named like a catalog model.
    const { upstream } = fakeUpstream(["m/ok"]);
    await runToolCall(caller, upstream, { server: "up", tool: "m/ok", via: "responses", metricServer: "(client_url)" });
    expect(ledger[0]).toMatchObject({ provider: "(client_url)", model: "mcp:up__m/ok", endpoint: "responses_mcp_tool" });
  });

  it("a client's failing server named like a server of gateway.yaml does not open that server's circuit", async () => {
    const { caller, registry } = setup();
    const failing = { spec, tools: async () => [], goesOnLastNames: () => false, listsTool: () => false, call: async () => { throw new Error("connection refused"); } } as unknown as Upstream;
    for (let i = 0; i < 20; i++) await runToolCall(caller, failing, { server: "files", tool: "x", via: "responses", metricServer: "(client_url)" });
    expect(healthOf(caller.gateway).stateOf("mcp:files", "files")).toBe("closed");
    expect(await registry.metrics()).not.toContain('model="mcp:files"');
  });
});

describe("runToolCall and the server's circuit breaker", () => {
  /** An upstream listing tool t (one list, cached as a real one's is), whose calls are `call`. */
  const listing = (call: () => Promise<never>) => {
    const list = Promise.resolve([{ name: "t", inputSchema: { type: "object" } }]);
    return { spec, tools: () => list, goesOnLastNames: () => false, listsTool: () => true, call } as unknown as Upstream;
  };

  it("a tool the server answers with a JSON-RPC error fails that call only: the circuit stays closed for every project", async () => {
    const { caller, ledger } = setup();
    const throwing = listing(async () => { throw new ErrorAnswer("MCP error -32603: boom thrown", -32603); });
    for (let i = 0; i < 20; i++) {
      const r = await runToolCall(caller, throwing, { server: "files", tool: "t", via: "mcp" });
      expect((r.content[0] as { text: string }).text).toBe("Tool call to files__t failed: MCP error -32603: boom thrown");
    }
    expect(healthOf(caller.gateway).stateOf("mcp:files", "files")).toBe("closed");
    expect(ledger).toHaveLength(20);
    expect(ledger[0]).toMatchObject({ status: 502, outcome: "error" });
  });

  it("a call let through before the circuit opened, cancelled while the half-open probe is out, does not free the probe's slot", async () => {
    const { caller } = setup();
    (caller.gateway.config.raw as Record<string, unknown>).routing = { circuit_breaker: { consecutive_failures: 2, cooldown_ms: 50 } };
    const held = listing((async (_t: string, _a: unknown, o: { signal?: AbortSignal }) => new Promise((_, reject) => {
      o.signal?.addEventListener("abort", () => reject(new Error("aborted")));
    })) as never);
    const earlier = new AbortController();
    const earlierCall = runToolCall(caller, held, { server: "files", tool: "t", via: "mcp" }, { signal: earlier.signal });
    const broken = listing(async () => { throw new Error("fetch failed"); });
    for (let i = 0; i < 2; i++) await runToolCall(caller, broken, { server: "files", tool: "t", via: "mcp" });
    const health = healthOf(caller.gateway);
    expect(health.stateOf("mcp:files", "files")).toBe("open");
    await new Promise((r) => setTimeout(r, 80)); // past the cooldown
    const probe = new AbortController();
    const probeCall = runToolCall(caller, held, { server: "files", tool: "t", via: "mcp" }, { signal: probe.signal });
    earlier.abort(); // the earlier call's client leaves
    await earlierCall;
    const next = await runToolCall(caller, listing(async () => ({ content: [{ type: "text", text: "served" }] }) as never), { server: "files", tool: "t", via: "mcp" });
    expect((next.content[0] as { text: string }).text).toContain("circuit open"); // no second probe while the first is out
    probe.abort();
    await probeCall;
  });

  it("calls failing on one connection attempt they shared count it once; a second attempt's failure opens it", async () => {
    const { caller } = setup();
    (caller.gateway.config.raw as Record<string, unknown>).routing = { circuit_breaker: { consecutive_failures: 2, cooldown_ms: 60_000 } };
    // The connection dropped after the tools were listed: each call's connect waits on the one attempt under way.
    let attempt = new ConnectFailedError('could not connect to MCP server "files": fetch failed');
    const reconnecting = listing(async () => { throw attempt; });
    const health = healthOf(caller.gateway);
    const calls = await Promise.all([1, 2, 3].map(() => runToolCall(caller, reconnecting, { server: "files", tool: "t", via: "mcp" })));
    for (const r of calls) expect((r.content[0] as { text: string }).text).toMatch(/^MCP server "files" is not available: could not connect/);
    expect(health.stateOf("mcp:files", "files")).toBe("closed");
    attempt = new ConnectFailedError('could not connect to MCP server "files": fetch failed');
    await runToolCall(caller, reconnecting, { server: "files", tool: "t", via: "mcp" });
    expect(health.stateOf("mcp:files", "files")).toBe("open");
  });

  it("a server failing to answer (a transport error) still opens it", async () => {
    const { caller } = setup();
    const broken = listing(async () => { throw new Error("fetch failed"); });
    for (let i = 0; i < 20; i++) await runToolCall(caller, broken, { server: "files", tool: "t", via: "mcp" });
    expect(healthOf(caller.gateway).stateOf("mcp:files", "files")).toBe("open");
  });
});
