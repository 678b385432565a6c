// Prompt caching for chat clients of Claude on Bedrock through Converse (bedrock_claude_api: converse): a real gateway
// in front of the fake Bedrock; what Bedrock receives is checked (cachePoints, their ttl, caching "auto").
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { FAKE_AWS, startFakeBedrock, type FakeBedrock } from "./upstreams/bedrock.ts";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";

const LIVE = testKey("bedrock-converse-cache");
let bedrock: FakeBedrock;
let gw: TestGateway;

beforeAll(async () => {
  bedrock = await startFakeBedrock();
  gw = await startTestGateway({
    providers: { "aws-converse": { protocol: "bedrock", region: FAKE_AWS.region, aws_access_key_id: FAKE_AWS.accessKeyId, aws_secret_access_key: FAKE_AWS.secretAccessKey, base_url: bedrock.baseUrl, bedrock_claude_api: "converse" } },
    models: { "test/claude-converse": { endpoints: [{ provider: "aws-converse", model: "us.anthropic.claude-sonnet-4-5-20250929-v1:0", pricing: { input: "0.000003", output: "0.000015" } }] } },
    projects: { acme: { keys: [keyEntry("ci", LIVE)] } },
  });
});

afterAll(async () => {
  await gw?.close();
  await bedrock?.close();
});

beforeEach(() => { bedrock.requests.length = 0; });

const chat = (body: unknown) => postJson(gw.baseURL + "/chat/completions", body, { authorization: `Bearer ${LIVE}` });
const points = (body: unknown) => JSON.stringify(body).match(/\{"cachePoint":\{[^}]*\}\}/g) ?? [];

describe("chat client -> Claude on Bedrock Converse: prompt caching", () => {
  it("1h markers stay 1h; marked tools and tool results get their cache points", async () => {
    const r = await chat({
      model: "test/claude-converse", max_tokens: 50,
      tools: [{ type: "function", function: { name: "a", parameters: { type: "object" } }, cache_control: { type: "ephemeral", ttl: "1h" } }],
      messages: [
        { role: "system", content: [{ type: "text", text: "s", cache_control: { type: "ephemeral", ttl: "1h" } }] },
        { role: "user", content: "u1" },
        { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "a", arguments: "{}" } }] },
        { role: "tool", tool_call_id: "c1", content: [{ type: "text", text: "res", cache_control: { type: "ephemeral" } }] },
      ],
    });
    expect(r.status).toBe(200);
    const sent = bedrock.requests.at(-1)!.body;
    expect(sent.toolConfig.tools[1]).toEqual({ cachePoint: { type: "default", ttl: "1h" } });
    expect(sent.system).toEqual([{ text: "s" }, { cachePoint: { type: "default", ttl: "1h" } }]);
    expect(sent.messages[2].content[1]).toEqual({ cachePoint: { type: "default" } });
  });

  it("providerOptions.gateway.caching auto places 4 cache points, as the same body gets on Anthropic", async () => {
    const r = await chat({
      model: "test/claude-converse", max_tokens: 50, providerOptions: { gateway: { caching: "auto" } },
      tools: [{ type: "function", function: { name: "a", parameters: { type: "object" } } }],
      messages: [{ role: "system", content: "s" }, { role: "user", content: "u1" }, { role: "assistant", content: "a1" }, { role: "user", content: "u2" }],
    });
    expect(r.status).toBe(200);
    expect(points(bedrock.requests.at(-1)!.body)).toHaveLength(4);
  });

  it("a Messages client's caching auto reaches Converse as cache points too (Claude Code's markers do not survive the way through chat)", async () => {
    const r = await postJson(gw.baseURL + "/messages", {
      model: "test/claude-converse", max_tokens: 50, providerOptions: { gateway: { caching: "auto" } },
      tools: [{ name: "a", input_schema: { type: "object" } }],
      system: "s", messages: [{ role: "user", content: "u1" }, { role: "assistant", content: "a1" }, { role: "user", content: "u2" }],
    }, { authorization: `Bearer ${LIVE}`, "anthropic-version": "2023-06-01" });
    expect(r.status, r.text).toBe(200);
    expect(points(bedrock.requests.at(-1)!.body)).toHaveLength(4);
  });

  it("a Messages client's own markers, which do not survive its translation to chat, are named dropped", async () => {
    const r = await postJson(gw.baseURL + "/messages", {
      model: "test/claude-converse", max_tokens: 50,
      system: [{ type: "text", text: "s", cache_control: { type: "ephemeral" } }], messages: [{ role: "user", content: "u1" }],
    }, { authorization: `Bearer ${LIVE}`, "anthropic-version": "2023-06-01" });
    expect(r.status, r.text).toBe(200);
    expect(r.headers.get("x-mg-dropped-params")).toContain("cache_control");
  });
});
