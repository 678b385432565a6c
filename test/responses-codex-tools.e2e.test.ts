// Codex's tools on translated models (/v1/responses with the official openai client): an MCP server's tools arrive
// as a `namespace` tool and web search as the built-in `web_search`. Namespaces are flattened into function tools and
// the calls come back under the names Codex knows (name + namespace); web search becomes Anthropic's web_search
// server tool or Gemini's googleSearch where it can, and is otherwise dropped and named in x-mg-dropped-params, like
// any built-in tool the model cannot run; only a tool_choice forcing one is refused.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import OpenAI from "openai";
import { FAKE_ANTHROPIC_KEY, SEARCHED, startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { FAKE_GEMINI_KEY, GROUNDED, startFakeGemini, type FakeGemini } from "./upstreams/gemini.ts";
import { keyEntry, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";

const LIVE = testKey("codex-tools-e2e");
const pricing = { input: "0.000001", output: "0.000002" };
const MODELS = { chat: "openai/gpt-test", claude: "anthropic/claude-test", gemini: "google/gemini-test" } as const;
type Upstream = keyof typeof MODELS;
let fakes: { chat: FakeOpenAI; claude: FakeAnthropic; gemini: FakeGemini };
let gw: TestGateway;
let client: OpenAI;

beforeAll(async () => {
  const [chat, claude, gemini] = await Promise.all([startFakeOpenAI(), startFakeAnthropic(), startFakeGemini()]);
  fakes = { chat, claude, gemini };
  gw = await startTestGateway({
    store: { kind: "sqlite", path: "./gateway.db" },
    providers: {
      oai: { protocol: "openai", base_url: chat.baseUrl, api_key: "sk-fake-upstream" },
      claude: { protocol: "anthropic", base_url: claude.baseUrl, api_key: FAKE_ANTHROPIC_KEY },
      gem: { protocol: "gemini", base_url: gemini.baseUrl, api_key: FAKE_GEMINI_KEY },
    },
    models: {
      [MODELS.chat]: { type: "language", endpoints: [{ provider: "oai", model: "gpt-test", pricing }] },
      [MODELS.claude]: { type: "language", max_tokens: 8192, endpoints: [{ provider: "claude", model: "claude-test", pricing }] },
      [MODELS.gemini]: { type: "language", endpoints: [{ provider: "gem", model: "gemini-test", pricing }] },
    },
    projects: { acme: { keys: [keyEntry("ci", LIVE)], budget: { usd: "100", period: "month" }, rate_limits: { rpm: 10_000, tpm: 10_000_000 } } },
  });
  client = new OpenAI({ apiKey: LIVE, baseURL: gw.baseURL, maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
  await Promise.all(Object.values(fakes ?? {}).map((f) => f.close()));
});

const params = { type: "object", properties: { query: { type: "string" } }, required: ["query"], additionalProperties: false };
/** Codex's tool list: an MCP server as a namespace (first, so the fakes call it), its own shell, web search. */
const TOOLS = [
  { type: "namespace", name: "mcp__docs", description: "Tools in the mcp__docs namespace.", tools: [
    { type: "function", name: "search", description: "Search the docs", strict: false, parameters: params },
    { type: "function", name: "fetch", description: "Fetch a docs page", strict: false, parameters: params },
  ] },
  { type: "function", name: "shell", description: "Run a shell command", strict: false, parameters: { type: "object", properties: { command: { type: "array", items: { type: "string" } } } } },
  { type: "web_search", external_web_access: true },
] as unknown as OpenAI.Responses.Tool[];

async function create(body: Record<string, unknown>, stream: boolean): Promise<{ response: OpenAI.Responses.Response; headers: Headers; events: any[] }> {
  const params = { instructions: "You are Codex.", parallel_tool_calls: false, store: false, ...body } as OpenAI.Responses.ResponseCreateParamsNonStreaming;
  if (!stream) {
    const { data, response } = await client.responses.create(params).withResponse();
    return { response: data, headers: response.headers, events: [] };
  }
  const { data, response } = await client.responses.create({ ...params, stream: true }).withResponse();
  const events: any[] = [];
  for await (const e of data) events.push(e);
  const done = events.at(-1);
  expect(done.type).toBe("response.completed");
  return { response: done.response, headers: response.headers, events };
}

/** The function tool names an upstream was offered, in its own wire format. */
function offered(u: Upstream): string[] {
  const body = fakes[u].requests.at(-1)!.body;
  if (u === "gemini") return (body.tools ?? []).flatMap((t: any) => (t.functionDeclarations ?? []).map((d: any) => d.name));
  if (u === "claude") return (body.tools ?? []).filter((t: any) => !t.type).map((t: any) => t.name);
  return (body.tools ?? []).map((t: any) => t.function.name);
}

describe.each(["chat", "claude", "gemini"] as const)("Codex tools on %s", (u) => {
  it.each([false, true])("a namespaced tool is called under the name Codex knows, and the loop completes (stream=%s)", async (stream) => {
    const input: any[] = [{ role: "user", content: [{ type: "input_text", text: "Find the install steps in the docs" }] }];
    const turn1 = await create({ model: MODELS[u], input, tools: TOOLS }, stream);
    expect(offered(u)).toEqual(["mcp__docs__search", "mcp__docs__fetch", "shell"]);
    const call = turn1.response.output.find((o) => o.type === "function_call") as any;
    expect(call).toMatchObject({ type: "function_call", name: "search", namespace: "mcp__docs" });
    if (stream) {
      const added = turn1.events.find((e) => e.type === "response.output_item.added" && e.item.type === "function_call");
      expect(added.item).toMatchObject({ name: "search", namespace: "mcp__docs" });
    }
    // Web search: Anthropic's own server tool; Gemini refuses it beside functions and the chat upstream has none.
    const dropped = turn1.headers.get("x-mg-dropped-params") ?? "";
    if (u === "claude") {
      expect(fakes.claude.requests.at(-1)!.body.tools.at(-1)).toEqual({ type: "web_search_20250305", name: "web_search", max_uses: 10 });
      expect(dropped).not.toContain("web_search");
    } else {
      expect(dropped).toContain("tools[2].type=web_search");
    }
    // Codex sends the calls back as it got them, each with its output.
    const calls = turn1.response.output.filter((o) => o.type === "function_call") as any[];
    const history = [...input, ...turn1.response.output.filter((o) => o.type !== "message"), ...calls.map((c) => ({ type: "function_call_output", call_id: c.call_id, output: "1. npm install" }))];
    const turn2 = await create({ model: MODELS[u], input: history, tools: TOOLS }, stream);
    expect(turn2.response.status).toBe("completed");
    expect(turn2.response.output.map((o) => o.type)).toEqual(["message"]);
    // The upstream saw the call under its flat name, answered in its own format.
    expect(JSON.stringify(fakes[u].requests.at(-1)!.body)).toContain("mcp__docs__search");
  });
});

describe("web search on translated models", () => {
  it.each([false, true])("Anthropic searches with its web_search server tool and answers (stream=%s)", async (stream) => {
    const { response, headers } = await create({ model: MODELS.claude, input: "What is the latest gateway news?", tools: TOOLS }, stream);
    expect(response.status).toBe("completed");
    // The answer cites its source, so a web_search_call item goes with it: before it in JSON, after it in a stream
    // (where the search is known only once the source is cited).
    expect(response.output.map((o) => o.type).sort()).toEqual(["message", "web_search_call"]);
    expect((response.output.find((o) => o.type === "message") as any).content[0].text).toBe(SEARCHED);
    expect(headers.get("x-mg-dropped-params")).toBeNull();
  });

  it("Gemini grounds with Google Search when web search is the only tool", async () => {
    const { response } = await create({ model: MODELS.gemini, input: "What is the latest gateway news?", tools: [{ type: "web_search" }] }, false);
    expect(fakes.gemini.requests.at(-1)!.body.tools).toEqual([{ googleSearch: {} }]);
    expect((response.output.at(-1) as any).content[0].text).toBe(GROUNDED);
  });

  it("a tool_choice forcing web search is refused before any upstream call, naming the field", async () => {
    const before = fakes.claude.requests.length;
    const err = await client.responses.create({ model: MODELS.claude, input: "news", tools: TOOLS, tool_choice: { type: "web_search" } as never }).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.error).toMatchObject({ code: "INVALID_REQUEST", param: "tool_choice.type" });
    expect(fakes.claude.requests.length).toBe(before);
  });
});
