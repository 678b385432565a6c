// Whitespace-only text a chat, Responses or Gemini client sends (a blank system prompt or instructions, a tool result
// whose text is blank) never reaches Anthropic or Bedrock as a text block: both refuse the whole request for one
// ("system: text content blocks must contain non-whitespace text"; Converse's "… is blank"), which an OpenAI model
// serves. The fakes refuse blank text blocks as the real APIs do (test/upstreams/anthropic-checks.ts, bedrock.ts).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";
import { FAKE_AWS, startFakeBedrock, type FakeBedrock } from "./upstreams/bedrock.ts";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { geminiClient, type GeminiClient } from "./helpers/gemini-client.ts";

const LIVE = testKey("blank-text");
const auth = { authorization: `Bearer ${LIVE}` };
const CLAUDE = "anthropic/claude-sonnet-4.5";
const LLAMA = "meta/llama-3.3-70b"; // Bedrock Converse
const BEDROCK_CLAUDE = "bedrock/claude-sonnet-4.5"; // Bedrock InvokeModel (a Messages body)
const price = { input: "0.000003", output: "0.000015" };
let claude: FakeAnthropic;
let aws: FakeBedrock;
let gw: TestGateway;
let gemini: GeminiClient;

beforeAll(async () => {
  [claude, aws] = await Promise.all([startFakeAnthropic(), startFakeBedrock()]);
  gw = await startTestGateway({
    providers: {
      claude: { protocol: "anthropic", base_url: claude.baseUrl, api_key: FAKE_ANTHROPIC_KEY },
      aws: { protocol: "bedrock", region: FAKE_AWS.region, aws_access_key_id: FAKE_AWS.accessKeyId, aws_secret_access_key: FAKE_AWS.secretAccessKey, base_url: aws.baseUrl },
    },
    models: {
      [CLAUDE]: { max_tokens: 8192, endpoints: [{ provider: "claude", model: "claude-sonnet-4-5", pricing: price }] },
      [LLAMA]: { endpoints: [{ provider: "aws", model: "us.meta.llama3-3-70b-instruct-v1:0", pricing: price }] },
      [BEDROCK_CLAUDE]: { max_tokens: 8192, endpoints: [{ provider: "aws", model: "us.anthropic.claude-sonnet-4-5-20250929-v1:0", pricing: price }] },
    },
    projects: { acme: { keys: [keyEntry("ci", LIVE)] } },
  });
  gemini = geminiClient(`${gw.url}/api`, LIVE);
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([claude?.close(), aws?.close()]);
});

const chat = (body: unknown) => postJson(`${gw.baseURL}/chat/completions`, body, auth);
const lastBody = (fake: { requests: { body: any }[] }) => fake.requests.at(-1)!.body;
const weather = [{ type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } } }];
/** A tool loop whose result's only text part is blank (a tool that printed nothing but a newline). */
const blankResultLoop = [
  { role: "user", content: "weather in Paris?" },
  { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: "{\"city\":\"Paris\"}" } }] },
  { role: "tool", tool_call_id: "call_1", content: [{ type: "text", text: " " }] },
];

describe("a blank system prompt is left out", () => {
  it("chat to Anthropic: answered, and no system is sent", async () => {
    const r = await chat({ model: CLAUDE, messages: [{ role: "system", content: " " }, { role: "user", content: "hi" }] });
    expect(r.status, r.text).toBe(200);
    expect(r.json.choices[0].message.content).toBeTruthy();
    expect(lastBody(claude).system).toBeUndefined();
  });

  it("chat to Anthropic: blank system parts beside real ones are left out, the real ones sent", async () => {
    const r = await chat({ model: CLAUDE, messages: [{ role: "system", content: [{ type: "text", text: "\n" }, { type: "text", text: "Be brief." }] }, { role: "user", content: "hi" }] });
    expect(r.status, r.text).toBe(200);
    expect(lastBody(claude).system).toEqual([{ type: "text", text: "Be brief." }]);
  });

  it("Responses to Anthropic: blank instructions", async () => {
    const r = await postJson(`${gw.baseURL}/responses`, { model: CLAUDE, instructions: "\n", input: "hi" }, auth);
    expect(r.status, r.text).toBe(200);
    expect(r.json.status).toBe("completed");
    expect(lastBody(claude).system).toBeUndefined();
  });

  it("Gemini to Anthropic: a blank systemInstruction", async () => {
    const r = await gemini.generate(CLAUDE, { systemInstruction: { parts: [{ text: " \n" }] }, contents: [{ role: "user", parts: [{ text: "hi" }] }] });
    expect(r.candidates[0].content.parts.map((p: any) => p.text).join("")).toBeTruthy();
    expect(lastBody(claude).system).toBeUndefined();
  });

  it("chat to Bedrock Converse: answered, and no system is sent", async () => {
    const r = await chat({ model: LLAMA, messages: [{ role: "system", content: " " }, { role: "user", content: "hi" }] });
    expect(r.status, r.text).toBe(200);
    expect(r.json.choices[0].message.content).toBeTruthy();
    expect(lastBody(aws).system).toBeUndefined();
  });

  it("chat to Claude on Bedrock (InvokeModel): answered, and no system is sent", async () => {
    const r = await chat({ model: BEDROCK_CLAUDE, messages: [{ role: "system", content: "\t" }, { role: "user", content: "hi" }] });
    expect(r.status, r.text).toBe(200);
    expect(lastBody(aws).system).toBeUndefined();
  });
});

describe("a tool result whose text is blank still answers its call, without the blank text", () => {
  it("chat to Anthropic: the tool_result is sent with no content", async () => {
    const r = await chat({ model: CLAUDE, tools: weather, messages: blankResultLoop });
    expect(r.status, r.text).toBe(200);
    expect(r.json.choices[0].message.content).toBeTruthy();
    expect(lastBody(claude).messages.at(-1)).toEqual({ role: "user", content: [{ type: "tool_result", tool_use_id: "call_1" }] });
  });

  it("chat to Bedrock Converse: the toolResult holds a placeholder, not the blank text", async () => {
    const r = await chat({ model: LLAMA, tools: weather, messages: blankResultLoop });
    expect(r.status, r.text).toBe(200);
    expect(r.json.choices[0].message.content).toBeTruthy();
    expect(lastBody(aws).messages.at(-1).content).toEqual([{ toolResult: { toolUseId: "call_1", content: [{ text: "(empty)" }] } }]);
  });
});
