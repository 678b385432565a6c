// The gateway's mcp tool (a gateway.yaml mcp_servers entry, run by the gateway) on a native OpenAI model in a
// conversation chained by previous_response_id: the model is offered the server's tools as functions and reads their
// results, on the first and on later tool rounds; and the response the gateway made over several model turns can be
// continued (OpenAI's copy of its first turn holds a tool call without its result, so it is not continued by id).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import OpenAI from "openai";
import { startFakeOpenAIResponses, type FakeOpenAIWithResponses } from "./upstreams/openai-responses.ts";
import { startMcpHttpServer, type TestMcpHttpServer } from "./mcp/http-server.ts";
import { keyEntry, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";

const KEY = testKey("mcpnativechain");
const MODEL = "openai/gpt-4o-mini";
let up: FakeOpenAIWithResponses;
let docs: TestMcpHttpServer;
let gw: TestGateway;
let client: OpenAI;

beforeAll(async () => {
  [up, docs] = await Promise.all([startFakeOpenAIResponses(), startMcpHttpServer("docs")]);
  gw = await startTestGateway({
    store: { kind: "sqlite", path: "./gateway.db" },
    providers: { openai: { protocol: "openai", base_url: up.baseUrl, api_key: "sk-fake-upstream" } },
    models: { [MODEL]: { type: "language", endpoints: [{ provider: "openai", model: "gpt-4o-mini", native_responses: true, pricing: { input: "0.000001", output: "0.000002" } }] } },
    mcp_servers: { docs: { url: docs.url } },
    projects: { p: { keys: [keyEntry("k", KEY)] } },
  });
  client = new OpenAI({ apiKey: KEY, baseURL: gw.baseURL, maxRetries: 0 });
}, 30_000);

afterAll(async () => {
  await gw?.close();
  await Promise.all([up?.close(), docs?.close()]);
});

const tool = { type: "mcp" as const, server_label: "docs", allowed_tools: ["whoami"], require_approval: "never" as const };
const types = (r: OpenAI.Responses.Response) => r.output.map((o) => o.type);
const mcpCall = (r: OpenAI.Responses.Response) => r.output.find((o) => o.type === "mcp_call") as OpenAI.Responses.ResponseOutputItem.McpCall | undefined;

describe.each([false, true])("the gateway's mcp tool on a native model, continuing a native response (stream=%s)", (stream) => {
  const create = async (p: Record<string, unknown>): Promise<OpenAI.Responses.Response> =>
    stream ? client.responses.stream({ model: MODEL, ...p } as never).finalResponse() : client.responses.create({ model: MODEL, ...p } as never) as Promise<OpenAI.Responses.Response>;

  it("the model is offered the server's tools, its call runs, the result reaches it; the answer can be continued", async () => {
    const t1 = await create({ input: "The password is marmot." });
    expect(up.responses.stored.has(t1.id)).toBe(true); // served natively: previous_response_id would pass through

    const from = up.requests.length;
    const t2 = await create({ previous_response_id: t1.id, input: "Which server are you?", tools: [tool] });
    expect(types(t2)).toEqual(["mcp_list_tools", "mcp_call", "message"]);
    expect(JSON.parse(mcpCall(t2)!.output!)).toMatchObject({ who: "docs" });
    expect(t2.previous_response_id).toBe(t1.id);
    const sent = up.requests.slice(from).map((r) => r.body);
    expect(sent).toHaveLength(2); // the turn that calls the tool, the turn that reads its result
    for (const b of sent) {
      // The server's tools as functions, never the client's mcp tool (OpenAI would need a server_url for it).
      expect(b.tools.map((t: any) => `${t.type}:${t.name}`)).toEqual(["function:docs__whoami"]);
      // The earlier turn once: either by id or in the input, never both.
      const earlier = JSON.stringify(b.input).split("marmot").length - 1 + (b.previous_response_id ? 1 : 0);
      expect(earlier).toBe(1);
    }
    expect(JSON.stringify(sent[1]!.input)).toContain('\\"who\\":\\"docs\\"');

    // The response the gateway made of two model turns is continued with its whole conversation.
    const t3 = await create({ previous_response_id: t2.id, input: "And the password?" });
    expect(t3.status).toBe("completed");
    expect(t3.previous_response_id).toBe(t2.id);
    const b3 = up.requests.at(-1)!.body;
    expect(JSON.stringify(b3.input)).toContain("marmot");
    expect(JSON.stringify(b3.input)).toContain('\\"who\\":\\"docs\\"');
  }, 30_000);
});
