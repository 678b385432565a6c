// A streamed Responses request with the `mcp` tool, translated model: the client sees a call start while the tool
// still runs (output_item.added, mcp_call.in_progress and its arguments when the call starts, completed when it
// ends), and response.created shows the client's own mcp tool, not the functions the gateway offers the model. A
// call approved in a follow-up runs before the model's first turn: the stream starts before it all the same.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServer, type Server as HttpServer } from "node:http";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { keyEntry, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { until } from "./helpers/until.ts";

const KEY = testKey("mcpstream");
let openai: FakeOpenAI;
let gw: TestGateway;
let http: HttpServer;
/** Ends the running `wait` call (it answers "released"). */
let release: (() => void) | undefined;

/**
 * A Responses stream's events, read as they come: when the tool call's start arrives before its end, the test's tool
 * (which waits for `release`) is let go, so the stream can only end if the start was sent while the tool still ran.
 */
async function readReleasingTheTool(res: Response): Promise<{ events: any[]; sawStartWhileRunning: boolean }> {
  const events: any[] = [];
  let sawStartWhileRunning = false;
  let text = "";
  const decoder = new TextDecoder();
  for await (const chunk of res.body! as unknown as AsyncIterable<Uint8Array>) {
    text += decoder.decode(chunk, { stream: true });
    for (let end = text.indexOf("\n\n"); end >= 0; end = text.indexOf("\n\n")) {
      const frame = text.slice(0, end);
      text = text.slice(end + 2);
      const data = frame.split("\n").find((l) => l.startsWith("data: "));
      if (!data) continue;
      const ev = JSON.parse(data.slice(6));
      events.push(ev);
      if (ev.type === "response.mcp_call.in_progress") {
        sawStartWhileRunning = !events.some((e) => e.type === "response.mcp_call.completed" || e.type === "response.mcp_call.failed");
        if (sawStartWhileRunning) (await until("the call on the server", async () => release))();
      }
    }
  }
  return { events, sawStartWhileRunning };
}

beforeAll(async () => {
  // An MCP server whose `wait` tool runs until the test releases it.
  http = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const server = new Server({ name: "gate", version: "1" }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [{ name: "wait", inputSchema: { type: "object" } }] }));
    server.setRequestHandler(CallToolRequestSchema, () => new Promise((r) => {
      release = () => r({ content: [{ type: "text", text: "released" }] });
    }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    await transport.handleRequest(req, res, chunks.length ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : undefined);
  });
  await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
  openai = await startFakeOpenAI();
  openai.script = ({ tools, answered }) => {
    const tool = tools.find((t) => t.name === "gate__wait");
    return tool && !answered ? { call: { name: tool.name, input: {} } } : { text: "done waiting" };
  };
  gw = await startTestGateway({
    providers: { openai: { protocol: "openai", base_url: openai.baseUrl, api_key: "sk-fake-upstream" } },
    models: { "t/m": { type: "language", endpoints: [{ provider: "openai", model: "gpt-4o-mini", pricing: { input: "0.000001", output: "0.00001" } }] } },
    // Should the call's start wait for its end, the call gives up (timeout) before the test can release it.
    mcp_servers: { gate: { url: `http://127.0.0.1:${(http.address() as { port: number }).port}/mcp`, timeout_ms: 5000 } },
    projects: { p: { keys: [keyEntry("k", KEY)] } },
  });
}, 30_000);

afterAll(async () => {
  await gw?.close();
  await openai?.close();
  http?.closeAllConnections();
  await new Promise((r) => http?.close(r));
});

describe("a streamed response whose tool runs a while", () => {
  it("shows the call as it starts, the tool still running, and completes it when the tool ends", async () => {
    const tool = { type: "mcp", server_label: "gate", require_approval: "never" };
    const res = await fetch(`${gw.baseURL}/responses`, {
      method: "POST",
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "t/m", input: "Wait for the gate.", tools: [tool], stream: true }),
    });
    expect(res.status).toBe(200);
    // The call reaches the server just after its start is sent; the tool ends only once released.
    const { events, sawStartWhileRunning } = await readReleasingTheTool(res);
    expect(sawStartWhileRunning).toBe(true);
    const types = events.map((e) => e.type);
    const start = types.indexOf("response.mcp_call.in_progress");
    expect(types.slice(start - 1, start + 3)).toEqual(["response.output_item.added", "response.mcp_call.in_progress", "response.mcp_call_arguments.delta", "response.mcp_call_arguments.done"]);
    const completed = events.find((e) => e.type === "response.completed").response;
    expect(completed.output.find((o: any) => o.type === "mcp_call")).toMatchObject({ status: "completed", output: "released" });
    // response.created shows the tools the client sent, as response.completed does.
    expect(events.find((e) => e.type === "response.created").response.tools).toEqual([tool]);
    expect(completed.tools).toEqual([tool]);
    // It opens as every Responses stream does: response.created, then response.in_progress once, before the listing.
    expect(types.slice(0, 3)).toEqual(["response.created", "response.in_progress", "response.output_item.added"]);
    expect(types.filter((t) => t === "response.in_progress")).toHaveLength(1);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
  }, 30_000);

  it("approved in a follow-up: the stream starts before the call runs, and shows it start while the tool still runs", async () => {
    const tool = { type: "mcp", server_label: "gate" }; // require_approval: the default, always
    const ask = (body: Record<string, unknown>) => fetch(`${gw.baseURL}/responses`, {
      method: "POST",
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "t/m", tools: [tool], ...body }),
    });
    const first = await (await ask({ input: "Wait for the gate." })).json();
    const request = first.output.find((o: any) => o.type === "mcp_approval_request");
    expect(request).toMatchObject({ server_label: "gate", name: "wait" });
    release = undefined;
    const res = await ask({ stream: true, previous_response_id: first.id, input: [{ type: "mcp_approval_response", approval_request_id: request.id, approve: true }] });
    expect(res.status).toBe(200);
    // Before the fix the approved call ran before the stream began: nothing arrived until the tool gave up.
    const { events, sawStartWhileRunning } = await readReleasingTheTool(res);
    expect(sawStartWhileRunning).toBe(true);
    const types = events.map((e) => e.type);
    expect(types.slice(0, 2)).toEqual(["response.created", "response.in_progress"]);
    expect(types.filter((t) => t === "response.created")).toHaveLength(1);
    const completed = events.find((e) => e.type === "response.completed").response;
    expect(completed.id).toBe(events[0].response.id);
    expect(completed.output.map((o: any) => o.type)).toEqual(["mcp_call", "message"]);
    expect(completed.output[0]).toMatchObject({ approval_request_id: request.id, status: "completed", output: "released" });
    expect(events[0].response.tools).toEqual([tool]);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    // The response the stream made is the one stored: a later request continues it.
    const stored = await (await fetch(`${gw.baseURL}/responses/${completed.id}`, { headers: { authorization: `Bearer ${KEY}` } })).json();
    expect(stored).toMatchObject({ id: completed.id, previous_response_id: first.id, status: "completed" });
  }, 30_000);
});
