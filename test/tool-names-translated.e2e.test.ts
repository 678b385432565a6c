// A Gemini client's tool names may hold dots (Gemini CLI keeps them in MCP tool names: `github.search_issues`), which
// Anthropic refuses ("tools.0.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'"), as the fake does
// (test/upstreams/anthropic-checks.ts). Translated to Claude the name is sent changed, apart from a real tool named
// `github_search_issues`; the call comes back under the client's name, JSON and stream, and the next turn replaying
// it is answered.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";

const LIVE = testKey("tool-names");
const CLAUDE = "anthropic/claude-sonnet-4.5";
const price = { input: "0.000003", output: "0.000015" };
let claude: FakeAnthropic;
let gw: TestGateway;

beforeAll(async () => {
  claude = await startFakeAnthropic();
  gw = await startTestGateway({
    providers: { claude: { protocol: "anthropic", base_url: claude.baseUrl, api_key: FAKE_ANTHROPIC_KEY } },
    models: { [CLAUDE]: { max_tokens: 8192, endpoints: [{ provider: "claude", model: "claude-sonnet-4-5", pricing: price }] } },
    projects: { acme: { keys: [keyEntry("ci", LIVE)] } },
  });
});

afterAll(async () => {
  await gw?.close();
  await claude?.close();
});

const NAME = "github.search_issues";
const params = { type: "object", properties: { query: { type: "string" } }, required: ["query"] };
const tools = [{ functionDeclarations: [{ name: NAME, description: "Search issues", parameters: params }, { name: "github_search_issues", description: "Another tool", parameters: params }] }];
// Forced to the dotted tool: the model calls it alone.
const toolConfig = { functionCallingConfig: { mode: "ANY", allowedFunctionNames: [NAME] } };
const ask = [{ role: "user", parts: [{ text: "Find issues about tool names" }] }];
const url = (op: string) => `${gw.url}/api/v1beta/models/${CLAUDE}:${op}`;
const headers = { "x-goog-api-key": LIVE };
const calls = (candidates: any[]) => candidates.flatMap((c) => c?.content?.parts ?? []).filter((p: any) => p.functionCall).map((p: any) => p.functionCall);

describe("a Gemini client's dotted tool name on Claude", () => {
  it("JSON: the call comes back as github.search_issues, and the turn replaying it is answered", async () => {
    const r = await postJson(url("generateContent"), { contents: ask, tools, toolConfig }, headers);
    expect(r.status, r.text).toBe(200);
    const [call] = calls(r.json.candidates);
    expect(call.name).toBe(NAME);
    const sent = claude.requests.at(-1)!.body;
    expect(sent.tools.map((t: any) => t.name)).toEqual([expect.stringMatching(/^github_search_issues_[0-9a-f]{8}$/), "github_search_issues"]);

    const replay = [...ask, { role: "model", parts: [{ functionCall: call }] }, { role: "user", parts: [{ functionResponse: { name: NAME, id: call.id, response: { issues: [] } } }] }];
    const next = await postJson(url("generateContent"), { contents: replay, tools }, headers);
    expect(next.status, next.text).toBe(200);
    expect(next.json.candidates[0].content.parts.map((p: any) => p.text).join("")).toBe("The weather is sunny.");
    const replayed = claude.requests.at(-1)!.body.messages[1].content.find((b: any) => b.type === "tool_use");
    expect(replayed.name).toBe(sent.tools[0].name);
  });

  it("stream: the call comes back as github.search_issues", async () => {
    const res = await fetch(`${url("streamGenerateContent")}?alt=sse`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify({ contents: ask, tools, toolConfig }) });
    const text = await res.text();
    expect(res.status, text).toBe(200);
    const chunks = text.split("\n").filter((l) => l.startsWith("data: ")).map((l) => JSON.parse(l.slice(6)));
    expect(calls(chunks.flatMap((c) => c.candidates ?? [])).map((c) => c.name)).toEqual([NAME]);
  });
});
