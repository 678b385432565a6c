// The Responses API's `mcp` tool on models the gateway reaches through translation (an OpenAI chat-completions-,
// an Anthropic- and a Gemini-backed model): the official openai SDK asks; the gateway lists the MCP server's tools,
// offers them to the model, runs the model's calls and continues the turn with the results — streamed and not —
// and holds a call for approval when require_approval says so.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import OpenAI from "openai";
import { startResponsesClients, KEY, PROJECT, type ResponsesClientsEnv, type Upstream } from "./helpers/responses-clients.ts";
import { startMcpHttpServer, type TestMcpHttpServer } from "./mcp/http-server.ts";
import { keyEntry, testKey } from "./helpers/gateway.ts";

const SANDBOX = testKey("respmcpsandbox", true);

let env: ResponsesClientsEnv;
let docs: TestMcpHttpServer;
let client: OpenAI;

const MODELS: Array<{ model: string; upstream: Upstream }> = [
  { model: "openai/gpt-4o-mini", upstream: "openai" },
  { model: "anthropic/claude-sonnet-4", upstream: "anthropic" },
  { model: "google/gemini-2.5-flash", upstream: "gemini" },
];

beforeAll(async () => {
  docs = await startMcpHttpServer("docs");
  env = await startResponsesClients({
    native: false,
    configure: (c) => {
      c.mcp_servers = { docs: { url: docs.url } };
      c.projects[PROJECT].keys.push(keyEntry("sandbox", SANDBOX));
      c.server = { ...c.server, url_fetch: { allow_hosts: ["127.0.0.1"] } };
    },
  });
  client = new OpenAI({ apiKey: KEY, baseURL: env.gw.baseURL, maxRetries: 0 });
}, 30_000);

afterAll(async () => {
  await env?.close();
  await docs?.close();
});

/** The item types with a message the model may write before calling the tool (Claude does) left out. */
const typesOf = (output: Array<{ type: string }>) => output.map((o) => o.type).filter((t, i, all) => !(t === "message" && i < all.length - 1));

/** whoami's answer in the request the model's second turn got: the tool's result reached the model. */
function resultReachedModel(u: Upstream): boolean {
  const last = env.requestsOf(u).at(-1)!;
  return JSON.stringify(last.body).includes('\\"who\\":\\"docs\\"');
}

describe.each(MODELS)("mcp tool on $model (translated)", ({ model, upstream }) => {
  const tool = { type: "mcp" as const, server_label: "docs", allowed_tools: ["whoami"], require_approval: "never" as const };

  it("not streamed: mcp_list_tools, an mcp_call with the server's answer, then the model's text after reading it", async () => {
    const r = await client.responses.create({ model, input: "Which server are you?", tools: [tool] });
    expect(typesOf(r.output)).toEqual(["mcp_list_tools", "mcp_call", "message"]);
    const listed = r.output[0] as OpenAI.Responses.ResponseOutputItem.McpListTools;
    expect(listed).toMatchObject({ server_label: "docs" });
    expect(listed.tools.map((t) => t.name)).toEqual(["whoami"]);
    const call = r.output.find((o) => o.type === "mcp_call") as OpenAI.Responses.ResponseOutputItem.McpCall;
    expect(call).toMatchObject({ server_label: "docs", name: "whoami", error: null, status: "completed" });
    expect(JSON.parse(call.output!)).toMatchObject({ who: "docs" });
    expect(r.output_text.length).toBeGreaterThan(0);
    expect(resultReachedModel(upstream)).toBe(true);
    expect(r.tools).toEqual([expect.objectContaining({ type: "mcp", server_label: "docs" })]);
    // Two model turns, billed together.
    expect(r.usage!.input_tokens).toBeGreaterThan(0);
  }, 30_000);

  it("streamed: the mcp events as OpenAI sends them, the model's text, one response.completed", async () => {
    const stream = client.responses.stream({ model, input: "Which server are you?", tools: [tool] });
    const types: string[] = [];
    const seqs: number[] = [];
    for await (const ev of stream) {
      types.push(ev.type);
      seqs.push(ev.sequence_number);
    }
    const final = await stream.finalResponse();
    const order = (t: string) => types.indexOf(t);
    for (const t of ["response.created", "response.mcp_list_tools.in_progress", "response.mcp_list_tools.completed", "response.mcp_call.in_progress",
      "response.mcp_call_arguments.delta", "response.mcp_call_arguments.done", "response.mcp_call.completed", "response.output_text.delta", "response.completed"]) {
      expect(types, t).toContain(t);
    }
    expect(order("response.mcp_list_tools.completed")).toBeLessThan(order("response.mcp_call.in_progress"));
    expect(order("response.mcp_call.completed")).toBeLessThan(types.lastIndexOf("response.output_text.delta"));
    expect(types.filter((t) => t === "response.completed")).toHaveLength(1);
    expect(types.filter((t) => t === "response.created")).toHaveLength(1);
    expect(seqs).toEqual(seqs.map((_, i) => seqs[0]! + i));
    expect(typesOf(final.output)).toEqual(["mcp_list_tools", "mcp_call", "message"]);
    expect(JSON.parse((final.output.find((o) => o.type === "mcp_call") as any).output)).toMatchObject({ who: "docs" });
    expect(final.output_text.length).toBeGreaterThan(0);
    expect(resultReachedModel(upstream)).toBe(true);
  }, 30_000);
});

describe("approvals, client URLs and policies", () => {
  it("require_approval: an mcp_approval_request, then the approved call runs and the model continues (previous_response_id)", async () => {
    const tool = { type: "mcp" as const, server_label: "remote", server_url: docs.url, allowed_tools: ["whoami"], require_approval: "always" as const };
    const first = await client.responses.create({ model: "anthropic/claude-sonnet-4", input: "Which server are you?", tools: [tool] });
    expect(first.output.map((o) => o.type).filter((t) => t !== "message")).toEqual(["mcp_list_tools", "mcp_approval_request"]);
    const request = first.output.find((o) => o.type === "mcp_approval_request") as OpenAI.Responses.ResponseOutputItem.McpApprovalRequest;
    expect(request).toMatchObject({ server_label: "remote", name: "whoami" });
    const calls = docs.authorizations.length;

    const second = await client.responses.create({
      model: "anthropic/claude-sonnet-4", previous_response_id: first.id, tools: [tool],
      input: [{ type: "mcp_approval_response", approval_request_id: request.id, approve: true }],
    });
    expect(second.output.map((o) => o.type)).toEqual(["mcp_call", "message"]);
    expect(second.output[0]).toMatchObject({ name: "whoami", approval_request_id: request.id, status: "completed" });
    expect(docs.authorizations.length).toBeGreaterThan(calls);
    expect(resultReachedModel("anthropic")).toBe(true);

    // Denied: nothing runs, and the model is told so.
    const third = await client.responses.create({ model: "anthropic/claude-sonnet-4", input: "Which server are you?", tools: [tool] });
    const req3 = third.output.find((o) => o.type === "mcp_approval_request") as OpenAI.Responses.ResponseOutputItem.McpApprovalRequest;
    const before = docs.authorizations.length;
    const denied = await client.responses.create({
      model: "anthropic/claude-sonnet-4", previous_response_id: third.id, tools: [tool],
      input: [{ type: "mcp_approval_response", approval_request_id: req3.id, approve: false, reason: "not now" }],
    });
    expect(denied.output.map((o) => o.type)).toEqual(["message"]);
    expect(docs.authorizations.length).toBe(before);
    expect(JSON.stringify(env.requestsOf("anthropic").at(-1)!.body)).toContain("did not approve this tool call: not now");
  }, 30_000);

  it("a client server_url goes through the SSRF guard: internal or plain-http addresses are a 400 naming the field", async () => {
    for (const url of ["http://10.1.2.3/mcp", "https://localhost:1/mcp", "https://169.254.169.254/mcp"]) {
      const err = await client.responses.create({ model: "google/gemini-2.5-flash", input: "hi", tools: [{ type: "mcp", server_label: "x", server_url: url, require_approval: "never" }] })
        .catch((e) => e);
      expect(err, url).toBeInstanceOf(OpenAI.BadRequestError);
      expect(err.message, url).toMatch(/tools\[0\]\.server_url/);
    }
  }, 30_000);

  it("a sandbox key cannot run gateway.yaml's MCP servers (their tools run for real): a 400 naming the tool, no call", async () => {
    const before = (await env.gw.gateway.store.ledger({ project: PROJECT })).filter((r) => r.endpoint === "responses_mcp_tool").length;
    const sandbox = new OpenAI({ apiKey: SANDBOX, baseURL: env.gw.baseURL, maxRetries: 0 });
    const err = await sandbox.responses.create({ model: "openai/gpt-4o-mini", input: "who are you?", tools: [{ type: "mcp", server_label: "docs", require_approval: "never" }] }).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.message).toMatch(/tools\[0\]\.server_label: a sandbox key cannot use gateway\.yaml's MCP servers/);
    expect((await env.gw.gateway.store.ledger({ project: PROJECT })).filter((r) => r.endpoint === "responses_mcp_tool")).toHaveLength(before);
  });

  it("a label that names no server of gateway.yaml (and no URL) is a 400; tool calls land in the ledger", async () => {
    const err = await client.responses.create({ model: "google/gemini-2.5-flash", input: "hi", tools: [{ type: "mcp", server_label: "nowhere", require_approval: "never" }] }).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.message).toMatch(/tools\[0\]\.server_label: no MCP server "nowhere"/);
    const rows = (await env.gw.gateway.store.ledger({ project: PROJECT })).filter((r) => r.endpoint === "responses_mcp_tool");
    expect(rows.filter((r) => r.provider === "docs" && r.model === "whoami").length).toBeGreaterThanOrEqual(6);
    // A client server_url's calls are kept apart from the operator's names: provider (client_url), model mcp:label__tool.
    expect(rows.some((r) => r.provider === "(client_url)" && r.model === "mcp:remote__whoami")).toBe(true);
  });
});
