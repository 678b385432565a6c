// Upstream against a real MCP server over Streamable HTTP (the SDK's low-level Server, stateless): what a call's
// failure says about the server.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServer, type Server as HttpServer } from "node:http";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { ConnectFailedError, fetchBehind, listTiming, Upstream } from "./upstream.ts";

const TTL_MS = listTiming.ttlMs;
import { ErrorAnswer } from "./error-answers.ts";

const quiet = { debug() {}, info() {}, warn() {}, error() {}, enabled: () => false } as never;

let http: HttpServer;
let url: string;
/** A legacy HTTP+SSE server (transport: sse): every answer comes on the session's one GET stream. */
let legacyHttp: HttpServer;
let legacyUrl: string;
/** The legacy server's next session stream is never opened (a frozen server): its GET is left unanswered. */
let freezeNextStream = false;
/** tools/list requests the servers have answered. */
let toolLists = 0;
/** The servers' tool lists come in the other order; and name one more tool. */
let reversedLists = false;
let extraTool = false;
/** The servers' tool schemas name their properties in the other order (the same schema, written otherwise). */
let reorderedSchemas = false;
/** The servers answer tools/list with a JSON-RPC error. */
let failLists = false;
/** The servers list one more tool, "deep", whose inputSchema nests this many levels (0: none). */
let deepSchema = 0;
/** The deep tool's schema has, before its deep property, one whose default is 1e999 (Infinity once parsed). */
let infBeforeDeep = false;

/** {"type":"object","properties":{"a": …}} nested `depth` times, as JSON text (the SDK's server would overflow on it). */
const nestedJson = (depth: number) => `${'{"type":"object","properties":{"a":'.repeat(depth)}{"type":"object"}${"}}".repeat(depth)}`;

function rawServer(): Server {
  const server = new Server({ name: "raw", version: "1" }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => {
    toolLists++;
    if (failLists) throw new Error("lists are failing");
    const names = ["throw", "hang", "big", ...(extraTool ? ["extra"] : [])];
    const properties = reorderedSchemas ? { b: { type: "number" }, a: { type: "string", description: "first" } } : { a: { description: "first", type: "string" }, b: { type: "number" } };
    return { tools: (reversedLists ? names.reverse() : names).map((name) => ({ name, inputSchema: { type: "object" as const, properties } })) };
  });
  server.setRequestHandler(CallToolRequestSchema, async (r) => {
    if (r.params.name === "throw") throw new Error("boom thrown"); // answered as JSON-RPC error -32603
    if (r.params.name === "big") return { content: [{ type: "text", text: "x".repeat(Number(r.params.arguments?.bytes)) }] };
    return new Promise(() => {}); // hang: never answers
  });
  return server;
}

beforeAll(async () => {
  http = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const message = chunks.length ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : undefined;
    if (deepSchema && message?.method === "tools/list") {
      // Written by hand: the list with a "deep" tool beside the usual ones.
      const usual = '{"name":"throw","inputSchema":{"type":"object"}},{"name":"hang","inputSchema":{"type":"object"}},{"name":"big","inputSchema":{"type":"object"}}';
      const schema = infBeforeDeep ? nestedJson(deepSchema).replace('"properties":{', '"properties":{"aa":{"type":"number","default":1e999},') : nestedJson(deepSchema);
      const body = `{"jsonrpc":"2.0","id":${JSON.stringify(message.id)},"result":{"tools":[${usual},{"name":"deep","inputSchema":${schema}}]}}`;
      return void res.writeHead(200, { "content-type": "application/json" }).end(body);
    }
    if (req.url === "/admin/v1/config") {
      // Not an MCP server: an internal service on the same host, as the gateway's admin API answers.
      return void res.writeHead(401, { "content-type": "application/json" }).end('{"error":{"code":"INVALID_API_KEY","message":"Missing admin key: send Authorization: Bearer mg_admin_…"}}');
    }
    if (req.url === "/metrics") return void res.writeHead(200, { "content-type": "text/plain; version=0.0.4" }).end("# HELP internal_secret_total x\n");
    const server = rawServer();
    // /mcp answers a POST with JSON, /sse with an event stream (the SDK server's default).
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: !req.url?.startsWith("/sse") });
    await server.connect(transport);
    await transport.handleRequest(req, res, message);
  });
  await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
  url = `http://127.0.0.1:${(http.address() as { port: number }).port}/mcp`;
  const sessions = new Map<string, SSEServerTransport>();
  legacyHttp = createServer(async (req, res) => {
    const at = new URL(req.url!, "http://x");
    if (req.method === "GET" && at.pathname === "/sse") {
      if (freezeNextStream) {
        freezeNextStream = false;
        return;
      }
      const t = new SSEServerTransport("/messages", res);
      sessions.set(t.sessionId, t);
      await rawServer().connect(t);
      return;
    }
    const t = req.method === "POST" && at.pathname === "/messages" ? sessions.get(at.searchParams.get("sessionId") ?? "") : undefined;
    if (t) await t.handlePostMessage(req, res);
    else res.writeHead(404).end();
  });
  await new Promise<void>((r) => legacyHttp.listen(0, "127.0.0.1", r));
  legacyUrl = `http://127.0.0.1:${(legacyHttp.address() as { port: number }).port}/sse`;
});

afterAll(async () => {
  for (const h of [http, legacyHttp]) {
    h.closeAllConnections();
    await new Promise((r) => h.close(r));
  }
});

const upstream = (timeoutMs = 5000, maxAnswerBytes?: number, at = url) =>
  new Upstream({ kind: "http", name: "raw", url: at, transport: "streamable_http", headers: {}, timeoutMs, maxTotalMs: timeoutMs, maxAnswerBytes }, quiet, () => {});

describe("Upstream.call", () => {
  it("a JSON-RPC error the server answered with is an ErrorAnswer (the call's failure, not the server's)", async () => {
    const u = upstream();
    try {
      const err = await u.call("throw", {}).catch((e) => e);
      expect(err).toBeInstanceOf(ErrorAnswer);
      expect(err.message).toBe("MCP error -32603: boom thrown");
    } finally {
      await u.close();
    }
  });

  it("a call the server never answered in time is not", async () => {
    const u = upstream(300);
    try {
      const err = await u.call("hang", {}).catch((e) => e);
      expect(err).not.toBeInstanceOf(ErrorAnswer);
      expect(err.message).toMatch(/timed out/i);
    } finally {
      await u.close();
    }
  });
});

describe("Upstream.tools", () => {
  it("a list asked before the connection was made is the cached one after it: the next caller is not sent a second", async () => {
    // A slow server's first list outlives the wait of the request that asked for it (core/mcp/list-wait.ts): if the
    // connect that list waited on dropped it from the cache, the next caller started another, and gave up again.
    const u = upstream();
    try {
      const before = toolLists;
      const first = u.tools(); // starts the connection
      expect((await first).map((t) => t.name)).toEqual(["throw", "hang", "big"]);
      expect(u.tools()).toBe(first);
      expect(toolLists - before).toBe(1);
    } finally {
      await u.close();
    }
  });

  it("past its TTL, the list had is served at once to every caller while one refresh runs, which then replaces it", async () => {
    const u = upstream();
    try {
      const had = await u.tools();
      const before = toolLists;
      listTiming.ttlMs = 0; // every list is past its TTL
      const served = [u.tools(), u.tools(), u.tools()];
      const refresh = fetchBehind(served[0]);
      expect(refresh).not.toBe(served[0]); // a refresh stands behind the stale list: its outcome is the server's
      for (const p of served) {
        expect(fetchBehind(p)).toBe(refresh); // one refresh, whoever asked
        expect(await p).toBe(had);
      }
      await refresh;
      expect(toolLists - before).toBe(1);
    } finally {
      listTiming.ttlMs = TTL_MS;
      await u.close();
    }
  });

  it("hands a reload's new connection no names once a list of its failed since they landed", async () => {
    const u = upstream();
    try {
      await u.tools();
      expect([...u.knownToolNames]).toEqual(["throw", "hang", "big"]);
      listTiming.ttlMs = 0; // past its TTL: the next tools() refreshes
      failLists = true;
      await fetchBehind(u.tools()).catch(() => {});
      // A frozen or failing server's names would send the new connection's first calls to it (core/mcp/registry.ts).
      expect([...u.knownToolNames]).toEqual([]);
    } finally {
      failLists = false;
      listTiming.ttlMs = TTL_MS;
      await u.close();
    }
  });

  it("a refresh whose tool schemas name the same properties in another order tells no session the list changed", async () => {
    let changed = 0;
    const u = new Upstream({ kind: "http", name: "raw", url, transport: "streamable_http", headers: {}, timeoutMs: 5000, maxTotalMs: 5000 }, quiet, () => changed++);
    try {
      await u.tools();
      listTiming.ttlMs = 0; // every list is past its TTL: each tools() below starts a refresh
      reorderedSchemas = true;
      await fetchBehind(u.tools());
      expect(changed).toBe(0);
    } finally {
      listTiming.ttlMs = TTL_MS;
      reorderedSchemas = false;
      await u.close();
    }
  });

  it("a refresh that lands the same tools in another order tells no session the list changed; one with another tool does", async () => {
    let changed = 0;
    const u = new Upstream({ kind: "http", name: "raw", url, transport: "streamable_http", headers: {}, timeoutMs: 5000, maxTotalMs: 5000 }, quiet, () => changed++);
    try {
      await u.tools();
      listTiming.ttlMs = 0; // every list is past its TTL: each tools() below starts a refresh
      reversedLists = true;
      await fetchBehind(u.tools());
      expect(changed).toBe(0);
      extraTool = true;
      await fetchBehind(u.tools());
      expect(changed).toBe(1);
    } finally {
      listTiming.ttlMs = TTL_MS;
      reversedLists = extraTool = false;
      await u.close();
    }
  });
});

describe("a connection attempt", () => {
  it("to a legacy SSE server whose stream never opens ends on timeout_ms, and the next attempt connects", async () => {
    // Only the initialize request had a timeout: the stream's wait held the attempt, and every later call, for ever.
    freezeNextStream = true;
    const u = new Upstream({ kind: "http", name: "raw", url: legacyUrl, transport: "sse", headers: {}, timeoutMs: 500, maxTotalMs: 500 }, quiet, () => {});
    try {
      const err = await u.tools().catch((e) => e);
      expect(err).toBeInstanceOf(ConnectFailedError);
      expect(err.message).toMatch(/^could not connect to MCP server "raw": connecting took longer than 500 ms/);
      expect((await u.tools()).map((t) => t.name)).toEqual(["throw", "hang", "big"]);
    } finally {
      freezeNextStream = false;
      await u.close();
    }
  });
});

describe("an answer larger than mcp.max_result_bytes", () => {
  it.each(["json", "sse"])("fails its call at once naming the limit (%s answer); smaller ones pass", async (mode) => {
    // A long timeout: the call must fail on its size, not wait for it.
    const u = upstream(60_000, 100_000, mode === "sse" ? url.replace("/mcp", "/sse") : url);
    try {
      const err = await u.call("big", { bytes: 5_000_000 }).catch((e) => e);
      expect(err).toBeInstanceOf(Error);
      expect(err.message).toBe('MCP error -32000: the answer of MCP server "raw" was larger than 100000 bytes (mcp.max_result_bytes) and was cut off');
      const ok = await u.call("big", { bytes: 50_000 });
      expect((ok.content[0] as { text: string }).text).toHaveLength(50_000);
    } finally {
      await u.close();
    }
  });

  it("on a legacy SSE server (transport: sse), fails the call at once naming the limit, and later calls work", async () => {
    // Its answers all come on one GET stream: cut there, the call waiting on it is failed (not left to time out).
    const u = new Upstream({ kind: "http", name: "raw", url: legacyUrl, transport: "sse", headers: {}, timeoutMs: 60_000, maxTotalMs: 60_000, maxAnswerBytes: 100_000 }, quiet, () => {});
    try {
      const err = await u.call("big", { bytes: 5_000_000 }).catch((e) => e);
      expect(err).toBeInstanceOf(ErrorAnswer); // the server is up: not counted against it, as on the other transports
      expect(err.message).toBe('MCP error -32000: an answer of MCP server "raw" was larger than 100000 bytes (mcp.max_result_bytes): the stream carrying its answers (transport: sse) was cut off');
      const ok = await u.call("big", { bytes: 50_000 });
      expect((ok.content[0] as { text: string }).text).toHaveLength(50_000);
    } finally {
      await u.close();
    }
  });

  it("is 10 MiB unless set", async () => {
    const u = upstream(60_000);
    try {
      const err = await u.call("big", { bytes: 11 * 1024 * 1024 }).catch((e) => e);
      expect(err.message).toMatch(/larger than 10485760 bytes/);
    } finally {
      await u.close();
    }
  });
});

describe("a listed tool nested past a request body's bound (128 levels)", () => {
  /** Rejections nobody handled while a test ran: a list's landing must never make one. */
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => void unhandled.push(reason);

  it("a configured server's list goes on without it (logged); no unhandled rejection when the list lands or is compared", async () => {
    const warned: Array<{ msg: string; fields: any }> = [];
    const log = { ...(quiet as object), warn: (msg: string, fields: unknown) => void warned.push({ msg, fields }) } as never;
    const u = new Upstream({ kind: "http", name: "raw", url, transport: "streamable_http", headers: {}, timeoutMs: 5000, maxTotalMs: 5000 }, log, () => {});
    process.on("unhandledRejection", onUnhandled);
    deepSchema = 5000;
    try {
      expect((await u.tools()).map((t) => t.name)).toEqual(["throw", "hang", "big"]);
      await new Promise((r) => setTimeout(r, 50)); // the list has landed (and been compared)
      expect(warned).toContainEqual({ msg: "mcp server listed an item the gateway leaves out", fields: { server: "raw", reason: 'tool "deep": its inputSchema nests deeper than 128 levels' } });
      expect(unhandled).toEqual([]);
    } finally {
      deepSchema = 0;
      process.off("unhandledRejection", onUnhandled);
      await u.close();
    }
  });

  it("a client's own server (server_url) fails its list naming the tool, which the request answers as its tools[i]'s 502", async () => {
    const u = new Upstream({ kind: "http", name: "x", url, transport: "streamable_http", headers: {}, timeoutMs: 5000, maxTotalMs: 5000 }, quiet, () => {}, fetch);
    process.on("unhandledRejection", onUnhandled);
    deepSchema = 150_000;
    try {
      await expect(u.tools()).rejects.toThrow('tool "deep": its inputSchema nests deeper than 128 levels');
      await new Promise((r) => setTimeout(r, 50));
      expect(unhandled).toEqual([]);
      deepSchema = 50; // 100-odd levels (two per nesting: properties, a): within the bound, listed
      await u.tools().catch(() => {});
      expect((await u.tools()).map((t) => t.name)).toContain("deep");
    } finally {
      deepSchema = 0;
      process.off("unhandledRejection", onUnhandled);
      await u.close();
    }
  });
});

describe("a client's server (server_url) on an allowed host that is not an MCP server", () => {
  it("is told only the HTTP status or that no MCP answer came, never the body or content type; the log keeps them", async () => {
    const warned: Array<{ msg: string; fields: any }> = [];
    const log = { ...(quiet as object), warn: (msg: string, fields: unknown) => void warned.push({ msg, fields }) } as never;
    for (const [path, told] of [
      ["/admin/v1/config", 'could not connect to MCP server "x": the server answered HTTP 401, not as an MCP server'],
      ["/metrics", 'could not connect to MCP server "x": the server did not answer as an MCP server'],
    ] as const) {
      const u = new Upstream({ kind: "http", name: "x", url: url.replace("/mcp", path), transport: "streamable_http", headers: {}, timeoutMs: 2000, maxTotalMs: 2000 }, log, () => {}, fetch);
      try {
        const err = await u.tools().catch((e) => e);
        expect(err).toBeInstanceOf(ConnectFailedError);
        expect(err.message).toBe(told);
        expect(err.message).not.toMatch(/admin key|text\/plain|internal_secret/);
      } finally {
        await u.close();
      }
    }
    expect(warned.map((w) => w.fields.error).join("\n")).toMatch(/Missing admin key[\s\S]*text\/plain/);
  });

  it("a configured server (gateway.yaml) still says the whole failure: the operator's own", async () => {
    const u = new Upstream({ kind: "http", name: "cfg", url: url.replace("/mcp", "/admin/v1/config"), transport: "streamable_http", headers: {}, timeoutMs: 2000, maxTotalMs: 2000 }, quiet, () => {});
    try {
      expect((await u.tools().catch((e) => e)).message).toMatch(/Missing admin key/);
    } finally {
      await u.close();
    }
  });
});

describe("a listed tool with a 1e999 default before its deep property", () => {
  it("still fails a client's server's list naming the tool (the number did not end the depth check)", async () => {
    const u = new Upstream({ kind: "http", name: "x", url, transport: "streamable_http", headers: {}, timeoutMs: 5000, maxTotalMs: 5000 }, quiet, () => {}, fetch);
    deepSchema = 5000;
    infBeforeDeep = true;
    try {
      await expect(u.tools()).rejects.toThrow('tool "deep": its inputSchema nests deeper than 128 levels');
    } finally {
      deepSchema = 0;
      infBeforeDeep = false;
      await u.close();
    }
  });
});
