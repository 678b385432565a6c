// The MCP gateway end to end: the official SDK's client against {base_url}/mcp of a gateway (SQLite store, default
// pipeline) fronting two real MCP servers written with the SDK — one over Streamable HTTP, one over stdio.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import YAML from "yaml";
import { McpError, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { startTestGateway, keyEntry, testKey, type TestGateway } from "./helpers/gateway.ts";
import { startOtlpReceiver, type OtlpReceiver } from "./helpers/otlp-receiver.ts";
import { startMcpHttpServer, type TestMcpHttpServer } from "./mcp/http-server.ts";
import { mcpClient, stdioServerConfig, textOf } from "./mcp/gateway.ts";
import { usageCommand } from "../core/store/usage-command.ts";
import { sha256Hex } from "../core/keys/keys.ts";
import { validateAdminRequest, validateAdminRequestPage } from "../core/generated/validators.js";

const ACME = testKey("mcpacme");
const BETA = testKey("mcpbeta");
const LIMITED = testKey("mcplimited");
const OWN = testKey("mcpown");
const ACME_SANDBOX = testKey("mcpacmesb", true);
const ADMIN = "mg_admin_mcp_read_key_for_tests_01";

let docs: TestMcpHttpServer;
let gw: TestGateway;
let otlp: OtlpReceiver;
let config: Record<string, any>;

beforeAll(async () => {
  docs = await startMcpHttpServer("docs");
  otlp = await startOtlpReceiver();
  config = {
    store: { kind: "sqlite", path: "ledger.db" },
    admin_keys: [{ id: "ops", sha256: sha256Hex(ADMIN), scope: "read" }],
    telemetry: { service_name: "gw-mcp", otlp: { endpoint: otlp.url } },
    mcp_servers: {
      docs: { url: docs.url, headers: { authorization: "Bearer ${DOCS_TOKEN}" }, timeout_ms: 10_000 },
      files: stdioServerConfig({ env: { FILES_TOKEN: "${FILES_TOKEN}" } }),
    },
    projects: {
      acme: { keys: [keyEntry("acme-key", ACME), keyEntry("acme-sandbox", ACME_SANDBOX)], budget: { usd: "10" }, rate_limits: { rpm: 1000 } },
      beta: { keys: [keyEntry("beta-key", BETA)], mcp: { allow_servers: ["files"], allow_tools: ["files__add", "files__who*"] } },
      limited: { keys: [keyEntry("limited-key", LIMITED, { rate_limits: { tool_calls_per_minute: 2 } })] },
      own: { keys: [keyEntry("own-key", OWN)], mcp: { servers: { docs: { headers: { authorization: "Bearer project-own" } }, files: { env: { FILES_TOKEN: "project-files" } } } } },
    },
  };
  // In the process environment too: a reload reads it.
  Object.assign(process.env, { DOCS_TOKEN: "gateway-docs", FILES_TOKEN: "gateway-files" });
  gw = await startTestGateway(config);
}, 30_000);

afterAll(async () => {
  await gw?.close();
  await docs?.close();
  await otlp?.close();
  delete process.env.DOCS_TOKEN;
  delete process.env.FILES_TOKEN;
});

const endpoint = () => `${gw.url}/api/mcp`;

/** An admin API answer, checked against its documented schema. */
async function adminGet(path: string, schema: typeof validateAdminRequest): Promise<any> {
  const res = await fetch(`${gw.url}/admin/v1${path}`, { headers: { authorization: `Bearer ${ADMIN}` } });
  const json = await res.json();
  expect(res.status, JSON.stringify(json)).toBe(200);
  expect(schema(json), JSON.stringify(schema.errors)).toBe(true);
  return json;
}

describe("one MCP endpoint in front of two servers", () => {
  it("lists every server's tools under its namespace and routes calls to the right server", async () => {
    const { client } = await mcpClient(endpoint(), ACME);
    try {
      const names = (await client.listTools()).tools.map((t) => t.name).sort();
      expect(names).toEqual(expect.arrayContaining(["docs__echo", "docs__add", "docs__slow", "files__echo", "files__add", "files__crash", "files__whoami"]));
      // The same tool name on both servers never collides: each call reaches its own server.
      expect(textOf(await client.callTool({ name: "docs__echo", arguments: { text: "hi" } }))).toBe("docs: hi");
      expect(textOf(await client.callTool({ name: "files__echo", arguments: { text: "hi" } }))).toBe("files: hi");
      expect(textOf(await client.callTool({ name: "files__add", arguments: { a: 2, b: 40 } }))).toBe("42");
      // The gateway's credentials went to each server.
      expect(JSON.parse(textOf(await client.callTool({ name: "docs__whoami" }))).credential).toBe("Bearer gateway-docs");
      expect(JSON.parse(textOf(await client.callTool({ name: "files__whoami" }))).credential).toBe("gateway-files");
      // Prompts and resources are namespaced the same way.
      expect((await client.listPrompts()).prompts.map((p) => p.name)).toContain("files__review");
      const prompt = await client.getPrompt({ name: "files__review", arguments: { path: "a.ts" } });
      expect((prompt.messages[0]!.content as any).text).toBe("Review a.ts");
      const resources = (await client.listResources()).resources;
      expect(resources.map((r) => r.uri)).toEqual(["mcpgw://docs/docs://readme"]);
      const read = await client.readResource({ uri: "mcpgw://docs/docs://readme" });
      expect(read.contents[0]).toMatchObject({ uri: "mcpgw://docs/docs://readme", text: "docs readme" });
      // A tool error of the server is the server's result, passed through.
      const failed = await client.callTool({ name: "docs__fail" });
      expect(failed.isError).toBe(true);
      expect(textOf(failed)).toBe("it failed, as asked");
    } finally {
      await client.close();
    }
  }, 30_000);

  it("a project sees only the servers and tools its allowlist names", async () => {
    const { client } = await mcpClient(endpoint(), BETA);
    try {
      const names = (await client.listTools()).tools.map((t) => t.name).sort();
      expect(names).toEqual(["files__add", "files__whoami"]);
      expect((await client.listResources()).resources).toEqual([]);
      await expect(client.callTool({ name: "docs__echo", arguments: { text: "x" } })).rejects.toThrow(/Unknown tool: docs__echo/);
      await expect(client.callTool({ name: "files__crash", arguments: {} })).rejects.toThrow(/Unknown tool: files__crash/);
      await expect(client.readResource({ uri: "mcpgw://docs/docs://readme" })).rejects.toBeInstanceOf(McpError);
      expect(textOf(await client.callTool({ name: "files__add", arguments: { a: 1, b: 1 } }))).toBe("2");
    } finally {
      await client.close();
    }
  }, 30_000);

  it("a project's own credentials reach the server instead of the gateway's", async () => {
    const { client } = await mcpClient(endpoint(), OWN);
    try {
      expect(JSON.parse(textOf(await client.callTool({ name: "docs__whoami" }))).credential).toBe("Bearer project-own");
      expect(JSON.parse(textOf(await client.callTool({ name: "files__whoami" }))).credential).toBe("project-files");
    } finally {
      await client.close();
    }
  }, 30_000);

  it("no key, a wrong key, or another key's session id: refused", async () => {
    const noKey = await fetch(endpoint(), { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }) });
    expect(noKey.status).toBe(401);
    expect((await noKey.json()).error.code).toBe("INVALID_API_KEY");
    const { client, transport } = await mcpClient(endpoint(), ACME);
    try {
      const stolen = await fetch(endpoint(), {
        method: "POST",
        headers: { authorization: `Bearer ${BETA}`, "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-session-id": transport.sessionId!, "mcp-protocol-version": "2025-11-25" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      });
      expect(stolen.status).toBe(404);
    } finally {
      await client.close();
    }
  }, 30_000);

  it("a sandbox key is refused (403, JSON-RPC error): the tools would run for real, on the gateway's credentials", async () => {
    const headers = { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25" };
    const init = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } } };
    for (const path of ["/api/mcp", "/api/v1/mcp"]) {
      const r = await fetch(`${gw.url}${path}`, { method: "POST", headers: { ...headers, authorization: `Bearer ${ACME_SANDBOX}` }, body: JSON.stringify(init) });
      expect(r.status).toBe(403);
      expect(r.headers.get("mcp-session-id")).toBeNull();
      const body = await r.json();
      expect(body).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32001 } });
      expect(body.error.message).toMatch(/run for real.*live key/);
    }
    // Nor can it use a session its project's live key opened (it would be another key's anyway), or call a tool.
    const { client, transport } = await mcpClient(endpoint(), ACME);
    try {
      const call = await fetch(endpoint(), {
        method: "POST",
        headers: { ...headers, authorization: `Bearer ${ACME_SANDBOX}`, "mcp-session-id": transport.sessionId! },
        body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "docs__whoami", arguments: {} } }),
      });
      expect(call.status).toBe(403);
      expect((await call.json()).error.code).toBe(-32001);
    } finally {
      await client.close();
    }
    // The SDK client gives up at connect; the upstream server saw nothing of the sandbox key's.
    const calls = docs.authorizations.length;
    await expect(mcpClient(endpoint(), ACME_SANDBOX)).rejects.toThrow(/live key/);
    expect(docs.authorizations.length).toBe(calls);
  }, 30_000);

  it("tool calls count against the key's tool_calls_per_minute: the third of two is an error result", async () => {
    const { client } = await mcpClient(endpoint(), LIMITED);
    try {
      expect(textOf(await client.callTool({ name: "files__add", arguments: { a: 1, b: 2 } }))).toBe("3");
      expect(textOf(await client.callTool({ name: "docs__add", arguments: { a: 1, b: 2 } }))).toBe("3");
      const third = await client.callTool({ name: "docs__add", arguments: { a: 1, b: 2 } });
      expect(third.isError).toBe(true);
      expect(textOf(third)).toMatch(/Rate limit reached \(tool_calls_per_minute: 2\); retry after \d+s/);
      // Listing is not a tool call.
      expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    } finally {
      await client.close();
    }
  }, 30_000);

  it("a server killed mid-call is an error result; the gateway restarts it and the next call works", async () => {
    const { client } = await mcpClient(endpoint(), ACME);
    try {
      const before = JSON.parse(textOf(await client.callTool({ name: "files__whoami" }))).pid;
      const crashed = await client.callTool({ name: "files__crash", arguments: { after_ms: 100 } });
      expect(crashed.isError).toBe(true);
      expect(textOf(crashed)).toMatch(/Tool call to files__crash failed: .*(closed|Connection)/i);
      // Restarted with backoff (the first restart 0.5 s after the exit); a call waits for it within timeout_ms.
      const after = JSON.parse(textOf(await client.callTool({ name: "files__whoami" }))).pid;
      expect(after).not.toBe(before);
      expect(textOf(await client.callTool({ name: "files__add", arguments: { a: 5, b: 5 } }))).toBe("10");
    } finally {
      await client.close();
    }
  }, 30_000);

  it("progress notifications reach the client; a cancellation reaches the server", async () => {
    const { client } = await mcpClient(endpoint(), ACME);
    try {
      const progress: number[] = [];
      const done = await client.callTool({ name: "docs__slow", arguments: { steps: 3, id: "full" } }, undefined, { onprogress: (p) => progress.push(p.progress) });
      expect(textOf(done)).toBe("counted to 3");
      expect(progress).toEqual([1, 2, 3]);

      const abort = new AbortController();
      const seen: number[] = [];
      const call = client.callTool({ name: "docs__slow", arguments: { steps: 50, id: "cut-short" } }, undefined, {
        signal: abort.signal,
        onprogress: (p) => { seen.push(p.progress); if (p.progress === 2) abort.abort("enough"); },
      });
      await expect(call).rejects.toThrow();
      await expect.poll(() => docs.log.cancelled, { timeout: 5_000 }).toContain("cut-short");
      // The same over stdio.
      const abort2 = new AbortController();
      const call2 = client.callTool({ name: "files__slow", arguments: { steps: 50, id: "stdio-cut" } }, undefined, {
        signal: abort2.signal,
        onprogress: (p) => { if (p.progress === 1) abort2.abort("enough"); },
      });
      await expect(call2).rejects.toThrow();
      await expect.poll(async () => textOf(await client.callTool({ name: "files__cancelled" })), { timeout: 5_000 }).toContain("stdio-cut");
    } finally {
      await client.close();
    }
  }, 30_000);

  it("list_changed from a server reaches the client; the new tool is listed and callable", async () => {
    const { client } = await mcpClient(endpoint(), ACME);
    try {
      let changed = 0;
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => { changed++; });
      await client.listTools();
      docs.addTool("late_tool");
      await expect.poll(() => changed, { timeout: 5_000 }).toBeGreaterThan(0);
      expect((await client.listTools()).tools.map((t) => t.name)).toContain("docs__late_tool");
      expect(textOf(await client.callTool({ name: "docs__late_tool" }))).toBe("late_tool");
    } finally {
      await client.close();
    }
  }, 30_000);

  it("a session survives a config reload, and the new policy applies to it; DELETE ends it", async () => {
    const { client, transport } = await mcpClient(endpoint(), BETA);
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).not.toContain("docs__echo");
      const next = structuredClone(config);
      next.projects.beta.mcp = { allow_servers: ["docs", "files"] };
      writeFileSync(gw.configFile, YAML.stringify(next));
      expect(await gw.gateway.reload()).toMatchObject({ ok: true });
      expect(textOf(await client.callTool({ name: "docs__echo", arguments: { text: "after reload" } }))).toBe("docs: after reload");
      const sid = transport.sessionId!;
      await transport.terminateSession();
      const gone = await fetch(endpoint(), {
        method: "POST",
        headers: { authorization: `Bearer ${BETA}`, "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/list" }),
      });
      expect(gone.status).toBe(404);
    } finally {
      await client.close();
      writeFileSync(gw.configFile, YAML.stringify(config));
      await gw.gateway.reload();
    }
  }, 30_000);

  it("every tool call is a ledger row (server, tool, duration, status, bytes; no arguments) with a span under the caller's trace", async () => {
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const { client } = await mcpClient(endpoint(), ACME, { traceparent: `00-${traceId}-00f067aa0ba902b7-01` });
    try {
      await client.callTool({ name: "docs__echo", arguments: { text: "secret argument" } });
      await client.callTool({ name: "docs__fail" });
    } finally {
      await client.close();
    }
    const rows = (await gw.gateway.store.ledger({ project: "acme" })).filter((r) => r.endpoint === "mcp_tool");
    const echo = rows.filter((r) => r.provider === "docs" && r.model === "echo").at(-1)!;
    expect(echo).toMatchObject({ keyId: "acme-key", status: 200, outcome: "ok", costUsd: "0" });
    expect(echo.toolBytes).toBeGreaterThan(10);
    expect(echo.latencyMs).toBeGreaterThan(0);
    expect(echo.toolArguments).toBeUndefined();
    expect(rows.some((r) => Object.values(r).some((v) => String(v).includes("secret argument")))).toBe(false);
    expect(rows.find((r) => r.model === "fail")).toMatchObject({ provider: "docs", outcome: "error" });
    const crash = rows.find((r) => r.model === "crash");
    expect(crash).toMatchObject({ provider: "files", status: 502, outcome: "error" });

    // The admin API shows the calls with their result size, and no arguments.
    const page = await adminGet(`/requests?project=acme&endpoint=mcp_tool&model=echo&provider=docs&limit=1`, validateAdminRequestPage);
    expect(page.requests[0]).toMatchObject({ generation_id: echo.generationId, endpoint: "mcp_tool", model: "echo", provider: "docs", status: 200, tool_bytes: echo.toolBytes });
    expect(page.requests[0]).not.toHaveProperty("tool_arguments");

    // `model-gateway usage` reads the same SQLite ledger and shows the calls as mcp:server/tool rows.
    const out: string[] = [];
    const write = process.stdout.write;
    process.stdout.write = ((chunk: string) => { out.push(String(chunk)); return true; }) as typeof process.stdout.write;
    try {
      expect(await usageCommand(["--config", gw.configFile, "--project", "acme", "--json"])).toBe(0);
    } finally {
      process.stdout.write = write;
    }
    const usage = JSON.parse(out.join(""));
    expect(usage.find((r: any) => r.model === "mcp:docs/echo")).toMatchObject({ project: "acme", costUsd: "0" });
    expect(usage.find((r: any) => r.model === "mcp:docs/echo").requests).toBeGreaterThanOrEqual(2);

    await (await import("../core/observability/index.ts")).observabilityOf(gw.gateway).tracing!.flush();
    await expect.poll(() => otlp.spans.filter((s) => s.traceId === traceId && s.name === "execute_tool docs__echo").length, { timeout: 10_000 }).toBe(1);
    const spans = otlp.spans.filter((s) => s.traceId === traceId);
    const tool = spans.find((s) => s.name === "execute_tool docs__echo")!;
    const parent = spans.find((s) => s.spanId === tool.parentSpanId)!;
    expect(parent).toMatchObject({ kind: 2, name: "POST /api/mcp" });
    expect(tool.attributes).toMatchObject({ "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "docs__echo", "gateway.mcp.server": "docs", "gateway.mcp.status": "ok" });
    const fail = spans.find((s) => s.name === "execute_tool docs__fail")!;
    expect(fail).toMatchObject({ statusCode: 2, attributes: expect.objectContaining({ "error.type": "tool_error" }) });
  }, 30_000);

  it("with mcp.log_arguments the ledger keeps a call's arguments, and the admin API shows them", async () => {
    const next = structuredClone(config);
    next.mcp = { log_arguments: true };
    writeFileSync(gw.configFile, YAML.stringify(next));
    expect(await gw.gateway.reload()).toMatchObject({ ok: true });
    const { client } = await mcpClient(endpoint(), ACME);
    try {
      expect(textOf(await client.callTool({ name: "files__add", arguments: { a: 20, b: 22 } }))).toBe("42");
    } finally {
      await client.close();
      writeFileSync(gw.configFile, YAML.stringify(config));
      await gw.gateway.reload();
    }
    const rec = (await gw.gateway.store.ledger({ project: "acme" })).filter((r) => r.endpoint === "mcp_tool" && r.model === "add" && r.provider === "files").at(-1)!;
    expect(JSON.parse(rec.toolArguments!)).toEqual({ a: 20, b: 22 });
    const shown = await adminGet(`/requests/${rec.generationId}`, validateAdminRequest);
    expect(shown).toMatchObject({ tool_bytes: rec.toolBytes, tool_arguments: rec.toolArguments });
  }, 30_000);

  it("metrics per server and tool", async () => {
    const text = await (await fetch(gw.metricsUrl!)).text();
    expect(text).toMatch(/gateway_mcp_tool_calls_total\{server="docs",tool="echo",status="ok"\} [1-9]/);
    expect(text).toMatch(/gateway_mcp_tool_calls_total\{server="docs",tool="add",status="rate_limited"\} 1/);
    expect(text).toMatch(/gateway_mcp_tool_call_duration_seconds_count\{server="files",tool="add"\} [1-9]/);
  });
});
