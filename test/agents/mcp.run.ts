// A real agent with the gateway's MCP endpoint as its only MCP server: Claude Code (`--mcp-config`, `--strict-mcp-config`)
// talks to the gateway's messages endpoint (a scripted Anthropic-protocol fake plays the model) and to {base_url}/mcp,
// which fronts the Streamable HTTP test server. The model asks for the gateway's `docs__whoami` tool (Claude Code
// names it mcp__gateway__docs__whoami); the test checks that the call went through the gateway (its ledger row, the
// server's answer in the model's next turn) and that the agent's final answer carries it.
//
// Run with `npm run test:agents` (test/agents/vitest.config.ts picks up *.run.ts), or alone:
//   npx vitest run --config test/agents/vitest.config.ts test/agents/mcp.run.ts
// Claude Code is taken from test/agents/node_modules (the harness installs it there); when it is not, this file
// installs the pinned, Node-20-compatible version below into a temporary prefix from the npm registry.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { keyEntry, startTestGateway, testKey, type TestGateway } from "../helpers/gateway.ts";
import { startMcpHttpServer, type TestMcpHttpServer } from "../mcp/http-server.ts";

const CLAUDE_CODE = "@anthropic-ai/claude-code@2.1.197";
const KEY = testKey("mcpagent");
const TOOL = "mcp__gateway__docs__whoami";

function claudeBin(): string {
  const local = resolve(import.meta.dirname, "node_modules/.bin/claude");
  if (existsSync(local)) return local;
  const prefix = process.env.MCP_AGENT_PREFIX ?? mkdtempSync(join(tmpdir(), "mg-claude-"));
  const bin = join(prefix, "node_modules/.bin/claude");
  if (!existsSync(bin)) execFileSync("npm", ["install", "--prefix", prefix, CLAUDE_CODE, "--no-audit", "--no-fund"], { stdio: "ignore", timeout: 600_000 });
  return bin;
}

/** What the scripted model was asked, newest last. */
const asked: any[] = [];

/** The last user turn's tool_result text for our tool, if the model already called it. */
function toolResult(body: any): string | undefined {
  const last = (body.messages ?? []).at(-1);
  if (last?.role !== "user" || !Array.isArray(last.content)) return undefined;
  const r = last.content.find((b: any) => b.type === "tool_result");
  if (!r) return undefined;
  return typeof r.content === "string" ? r.content : (r.content ?? []).map((c: any) => c.text ?? "").join("");
}

/** A Messages API stream, as Anthropic frames it, for one text or tool_use block. */
function stream(res: import("node:http").ServerResponse, block: { type: "text"; text: string } | { type: "tool_use"; name: string }): void {
  const ev = (event: string, data: unknown) => res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  res.writeHead(200, { "content-type": "text/event-stream" });
  ev("message_start", { type: "message_start", message: { id: "msg_fake", type: "message", role: "assistant", model: "claude-sonnet-4", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 50, output_tokens: 1 } } });
  if (block.type === "text") {
    ev("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } });
    ev("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: block.text } });
  } else {
    ev("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "tool_use", id: "toolu_fake1", name: block.name, input: {} } });
    ev("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: "{}" } });
  }
  ev("content_block_stop", { type: "content_block_stop", index: 0 });
  ev("message_delta", { type: "message_delta", delta: { stop_reason: block.type === "text" ? "end_turn" : "tool_use", stop_sequence: null }, usage: { output_tokens: 10 } });
  ev("message_stop", { type: "message_stop" });
  res.end();
}

async function startScriptedModel(): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : {};
    if (!req.url?.startsWith("/v1/messages") || req.url.includes("count_tokens")) {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ input_tokens: 10 }));
      return;
    }
    asked.push(body);
    const hasTool = (body.tools ?? []).some((t: any) => t.name === TOOL);
    const result = toolResult(body);
    const block = result !== undefined ? { type: "text" as const, text: `The gateway's tool said: ${result}` }
      : hasTool ? { type: "tool_use" as const, name: TOOL } : { type: "text" as const, text: "ok" };
    if (body.stream) return stream(res, block);
    const content = block.type === "text" ? [{ type: "text", text: block.text }] : [{ type: "tool_use", id: "toolu_fake1", name: block.name, input: {} }];
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({
      id: "msg_fake", type: "message", role: "assistant", model: "claude-sonnet-4", content, stop_reason: block.type === "text" ? "end_turn" : "tool_use", stop_sequence: null, usage: { input_tokens: 50, output_tokens: 10 },
    }));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, close: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); }) };
}

let gw: TestGateway;
let docs: TestMcpHttpServer;
let model: Awaited<ReturnType<typeof startScriptedModel>>;

beforeAll(async () => {
  docs = await startMcpHttpServer("docs");
  model = await startScriptedModel();
  gw = await startTestGateway({
    store: { kind: "sqlite", path: "ledger.db" },
    providers: { anthropic: { protocol: "anthropic", base_url: model.url, api_key: "sk-ant-fake" } },
    models: { "anthropic/claude-sonnet-4": { endpoints: [{ provider: "anthropic", model: "claude-sonnet-4" }] } },
    mcp_servers: { docs: { url: docs.url } },
    projects: { agent: { keys: [keyEntry("agent-key", KEY)], mcp: { allow_tools: ["docs__whoami", "docs__echo"] } } },
  });
}, 600_000);

afterAll(async () => {
  await gw?.close();
  await docs?.close();
  await model?.close();
});

describe("Claude Code with the gateway as its only MCP server", () => {
  it("calls a tool of an upstream server through {base_url}/mcp", async () => {
    const bin = claudeBin();
    const home = mkdtempSync(join(tmpdir(), "mg-claude-home-"));
    const mcpConfig = JSON.stringify({ mcpServers: { gateway: { type: "http", url: `${gw.url}/api/mcp`, headers: { Authorization: `Bearer ${KEY}` } } } });
    const args = ["-p", "Ask the gateway's whoami tool which server it is, then tell me.", "--model", "anthropic/claude-sonnet-4",
      "--mcp-config", mcpConfig, "--strict-mcp-config", "--allowedTools", TOOL, "--output-format", "json"];
    const out = await new Promise<{ code: number | null; stdout: string; stderr: string }>((done) => {
      const child = spawn(bin, args, {
        cwd: home,
        env: {
          PATH: process.env.PATH ?? "", HOME: home,
          ANTHROPIC_BASE_URL: `${gw.url}/api`, ANTHROPIC_API_KEY: KEY,
          ANTHROPIC_SMALL_FAST_MODEL: "anthropic/claude-sonnet-4", ANTHROPIC_DEFAULT_HAIKU_MODEL: "anthropic/claude-sonnet-4",
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1", DISABLE_TELEMETRY: "1", DISABLE_ERROR_REPORTING: "1", DISABLE_AUTOUPDATER: "1",
        },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stdout = "", stderr = "";
      child.stdout.on("data", (c) => { stdout += c; });
      child.stderr.on("data", (c) => { stderr += c; });
      const timer = setTimeout(() => child.kill("SIGKILL"), 240_000);
      child.on("close", (code) => { clearTimeout(timer); done({ code, stdout, stderr }); });
    });
    expect(out.code, out.stderr.slice(-2000)).toBe(0);
    // Claude Code listed the gateway's tools and offered ours to the model.
    expect(asked.some((b) => (b.tools ?? []).some((t: any) => t.name === TOOL))).toBe(true);
    // The call went through the gateway: a ledger row for docs/whoami, and the server's answer reached the model.
    const rows = (await gw.gateway.store.ledger({ project: "agent" })).filter((r) => r.endpoint === "mcp_tool");
    expect(rows).toEqual([expect.objectContaining({ provider: "docs", model: "whoami", outcome: "ok" })]);
    expect(asked.some((b) => (toolResult(b) ?? "").includes('"who":"docs"'))).toBe(true);
    const result = JSON.parse(out.stdout.slice(out.stdout.indexOf("{"))).result as string;
    expect(result).toContain('"who":"docs"');
  }, 600_000);
});
