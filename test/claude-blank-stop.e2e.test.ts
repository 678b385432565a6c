// A stop sequence that is whitespace only (OpenAI's common stop: "\n") is refused by Anthropic for the whole request
// ("stop_sequences: each stop sequence must contain non-whitespace"), and by Claude on Bedrock Converse. Translated to
// Claude it is left out, named in x-mg-dropped-params as the client spells the field; the other stops are sent. A
// native Messages client's own stop_sequences go as sent (passthrough). The fakes refuse blank stops as the real APIs
// do (test/upstreams/anthropic-checks.ts, bedrock.ts).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";
import { startFakeBedrock, type FakeBedrock } from "./upstreams/bedrock.ts";
import { fakeBedrockProvider } from "./helpers/fake-bedrock-provider.ts";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";

const LIVE = testKey("blank-stop");
const auth = { authorization: `Bearer ${LIVE}` };
const CLAUDE = "anthropic/claude-sonnet-4.5";
const CONVERSE_CLAUDE = "test/claude-converse";
const NOVA = "amazon/nova-pro"; // Converse, not Claude: takes a blank stop
const price = { input: "0.000003", output: "0.000015" };
let claude: FakeAnthropic;
let aws: FakeBedrock;
let gw: TestGateway;

beforeAll(async () => {
  [claude, aws] = await Promise.all([startFakeAnthropic(), startFakeBedrock()]);
  gw = await startTestGateway({
    providers: {
      claude: { protocol: "anthropic", base_url: claude.baseUrl, api_key: FAKE_ANTHROPIC_KEY },
      aws: fakeBedrockProvider(aws, { bedrock_claude_api: "converse" }),
    },
    models: {
      [CLAUDE]: { max_tokens: 8192, endpoints: [{ provider: "claude", model: "claude-sonnet-4-5", pricing: price }] },
      [CONVERSE_CLAUDE]: { type: "language", endpoints: [{ provider: "aws", model: "us.anthropic.claude-sonnet-4-5-20250929-v1:0", pricing: price }] },
      [NOVA]: { type: "language", endpoints: [{ provider: "aws", model: "us.amazon.nova-pro-v1:0", pricing: price }] },
    },
    projects: { acme: { keys: [keyEntry("ci", LIVE)] } },
  });
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([claude?.close(), aws?.close()]);
});

const hi = [{ role: "user", content: "Hi" }];
const chat = (body: unknown) => postJson(`${gw.baseURL}/chat/completions`, body, auth);
const lastBody = (fake: { requests: { body: any }[] }) => fake.requests.at(-1)!.body;

describe("a whitespace-only stop sequence to Claude", () => {
  it("chat to Anthropic, stop \"\\n\": answered, no stop_sequences sent, stop named as dropped", async () => {
    const r = await chat({ model: CLAUDE, messages: hi, stop: "\n" });
    expect(r.status, r.text).toBe(200);
    expect(r.json.choices[0].message.content).toBeTruthy();
    expect(lastBody(claude).stop_sequences).toBeUndefined();
    expect(r.headers.get("x-mg-dropped-params")).toBe("stop");
  });

  it("chat to Anthropic, a blank stop beside a real one: the real one is sent", async () => {
    const r = await chat({ model: CLAUDE, messages: hi, stop: ["\n\n", "END", " "] });
    expect(r.status, r.text).toBe(200);
    expect(lastBody(claude).stop_sequences).toEqual(["END"]);
    expect(r.headers.get("x-mg-dropped-params")).toBe("stop");
  });

  it("Gemini client to Anthropic: named generationConfig.stopSequences", async () => {
    const r = await postJson(`${gw.url}/api/v1beta/models/${CLAUDE}:generateContent`, { contents: [{ role: "user", parts: [{ text: "Hi" }] }], generationConfig: { stopSequences: ["\n"] } }, { "x-goog-api-key": LIVE });
    expect(r.status, r.text).toBe(200);
    expect(lastBody(claude).stop_sequences).toBeUndefined();
    expect(r.headers.get("x-mg-dropped-params")).toBe("generationConfig.stopSequences");
  });

  it("chat to Claude on Converse: no stopSequences sent, stop named", async () => {
    const r = await chat({ model: CONVERSE_CLAUDE, messages: hi, stop: ["\n", "END"] });
    expect(r.status, r.text).toBe(200);
    expect(lastBody(aws).inferenceConfig.stopSequences).toEqual(["END"]);
    expect(r.headers.get("x-mg-dropped-params")).toBe("stop");
  });

  it("Messages client to Claude on Converse: named stop_sequences", async () => {
    const r = await postJson(`${gw.baseURL}/messages`, { model: CONVERSE_CLAUDE, max_tokens: 64, messages: hi, stop_sequences: ["\n"] }, { "x-api-key": LIVE, "anthropic-version": "2023-06-01" });
    expect(r.status, r.text).toBe(200);
    expect(lastBody(aws).inferenceConfig?.stopSequences).toBeUndefined();
    expect(r.headers.get("x-mg-dropped-params")).toBe("stop_sequences");
  });

  it("chat to a model that is not Claude (Nova on Converse): the blank stop is sent", async () => {
    const r = await chat({ model: NOVA, messages: hi, stop: "\n" });
    expect(r.status, r.text).toBe(200);
    expect(lastBody(aws).inferenceConfig.stopSequences).toEqual(["\n"]);
    expect(r.headers.get("x-mg-dropped-params")).toBeNull();
  });

  it("a native Messages client's own stop_sequences go to Anthropic as sent (its refusal relayed)", async () => {
    const r = await postJson(`${gw.baseURL}/messages`, { model: CLAUDE, max_tokens: 64, messages: hi, stop_sequences: ["\n"] }, { "x-api-key": LIVE, "anthropic-version": "2023-06-01" });
    expect(r.status, r.text).toBe(400);
    expect(r.json.error.message).toContain("each stop sequence must contain non-whitespace");
    expect(lastBody(claude).stop_sequences).toEqual(["\n"]);
  });
});
