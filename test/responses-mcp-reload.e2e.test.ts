// A Responses request whose mcp tool names a gateway.yaml server, in flight while a config reload changes that
// server (its env): the request finishes on the config it started with (its call reaches the server it listed the
// tools of), and the replaced server's process is stopped once that request is done. The reload used to close the
// connection under the request: its call failed ("MCP server \"files\" is closed") and the model answered without it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import type { ServerResponse } from "node:http";
import YAML from "yaml";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { chatChunks } from "./upstreams/openai-scripted-stream.ts";
import { toolsAnswered } from "./upstreams/openai-checks.ts";
import { stdioServerConfig } from "./mcp/gateway.ts";

const KEY = testKey("respmcpreload");
let up: FakeOpenAI;
let gw: TestGateway;
/** The first model turn the fake holds, and how the test lets it answer (with a call of files__whoami). */
let held: { arrived: Promise<void>; answer: () => void };

/** The stdio test server, its token (whoami tells it) and a marker argument that tells its process apart. */
function files(token: string): Record<string, unknown> {
  const base = stdioServerConfig() as { args: string[] };
  return { ...base, args: [...base.args, `mark=${token}-${process.pid}`], env: { FILES_TOKEN: token } };
}

/** The pids of this process's children started for `token`. */
function processesOf(token: string): number[] {
  const out = execFileSync("ps", ["-eo", "pid=,ppid=,args="], { encoding: "utf8" });
  return out.split("\n").map((l) => l.trim().split(/\s+/)).filter((f) => Number(f[1]) === process.pid && f.includes(`mark=${token}-${process.pid}`)).map((f) => Number(f[0]));
}

const configWith = (token: string) => ({
  store: { kind: "sqlite", path: "ledger.db" },
  providers: { fakeoai: { protocol: "openai", base_url: up.baseUrl, api_key: "sk-fake-upstream" } },
  models: { "acme/chat": { type: "language", tags: ["tool-use"], endpoints: [{ provider: "fakeoai", model: "chat-1", pricing: { input: "0.000001", output: "0.000002" } }] } },
  mcp_servers: { files: files(token) },
  projects: { acme: { keys: [keyEntry("acme-key", KEY)] } },
});

/** The model's first turn: a call of files__whoami, as JSON or as a stream. */
function answerWithCall(res: ServerResponse, body: any): void {
  const call = { id: "call_who1", type: "function", function: { name: "files__whoami", arguments: "{}" } };
  if (!body.stream) {
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({
      id: "chatcmpl-who", object: "chat.completion", created: 1770000000, model: body.model,
      choices: [{ index: 0, message: { role: "assistant", content: null, tool_calls: [call] }, finish_reason: "tool_calls" }],
      usage: { prompt_tokens: 40, completion_tokens: 5, total_tokens: 45 },
    }));
    return;
  }
  const { chunk, usage } = chatChunks("chatcmpl-who", body.model);
  const chunks = [chunk({ role: "assistant", content: null, tool_calls: [{ index: 0, ...call }] }), chunk({}, "tool_calls"), usage];
  res.writeHead(200, { "content-type": "text/event-stream" }).end(chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join("") + "data: [DONE]\n\n");
}

/** Hold the next first turn until the test says; turns after a tool's result get the fake's usual text. */
function holdFirstTurn(): void {
  let arrived!: () => void;
  let answer!: () => void;
  const gate = new Promise<void>((r) => { answer = r; });
  held = { arrived: new Promise<void>((r) => { arrived = r; }), answer };
  up.hook = (rec, res) => {
    if (rec.path !== "/v1/chat/completions" || toolsAnswered(rec.body?.messages)) return false;
    arrived();
    void gate.then(() => answerWithCall(res, rec.body));
    return true;
  };
}

async function reload(token: string): Promise<void> {
  writeFileSync(gw.configFile, YAML.stringify(configWith(token)));
  expect(await gw.gateway.reload()).toMatchObject({ ok: true });
}

beforeAll(async () => {
  up = await startFakeOpenAI();
  gw = await startTestGateway(configWith("first"));
}, 30_000);

afterAll(async () => {
  await gw?.close();
  await up?.close();
});

const ask = (stream: boolean) => postJson(`${gw.baseURL}/responses`, {
  model: "acme/chat", input: "Which server are you?", stream,
  tools: [{ type: "mcp", server_label: "files", allowed_tools: ["whoami"], require_approval: "never" }],
}, { authorization: `Bearer ${KEY}` });

/** The mcp_call item of a JSON answer, or of a stream's response.completed. */
function mcpCallOf(r: { json: any; text: string }, stream: boolean): any {
  const response = stream
    ? r.text.split("\n").filter((l) => l.startsWith("data: ")).map((l) => JSON.parse(l.slice(6))).find((e) => e.type === "response.completed")?.response
    : r.json;
  return response?.output?.find((o: any) => o.type === "mcp_call");
}

describe("a Responses mcp loop in flight when a reload changes its server", () => {
  it.each([
    { stream: false, before: "first", after: "second" },
    { stream: true, before: "second", after: "third" },
  ])("stream: $stream — its call runs on the server it started with, whose process stops once the request is done", async ({ stream, before, after }) => {
    await expect.poll(() => processesOf(before).length, { timeout: 20_000 }).toBe(1);
    holdFirstTurn();
    const pending = ask(stream);
    await held.arrived; // the tools were listed from the server as configured now
    await reload(after);
    await expect.poll(() => processesOf(after).length, { timeout: 20_000 }).toBe(1);
    expect(processesOf(before)).toHaveLength(1); // still serving the request in flight
    held.answer();
    const r = await pending;
    expect(r.status).toBe(200);
    const call = mcpCallOf(r, stream);
    expect(call).toMatchObject({ server_label: "files", name: "whoami", status: "completed" });
    expect(call.error ?? null).toBeNull();
    expect(JSON.parse(call.output)).toMatchObject({ who: "files", credential: before });
    // The model's second turn read the tool's result.
    expect(JSON.stringify(up.requests.at(-1)!.body.messages)).toContain(`\\"credential\\":\\"${before}\\"`);
    // The replaced server goes once the request that held it is done: nothing left running.
    await expect.poll(() => processesOf(before).length, { timeout: 10_000 }).toBe(0);
    up.hook = undefined;
  }, 60_000);

  it("a request after the reload runs on the new config", async () => {
    const r = await ask(false);
    expect(JSON.parse(mcpCallOf(r, false).output)).toMatchObject({ credential: "third" });
    expect(processesOf("third")).toHaveLength(1);
  }, 30_000);
});
