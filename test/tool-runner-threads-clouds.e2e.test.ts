// The Anthropic SDK's tool runner on Claude through Bedrock's InvokeModel and Vertex, on the gateway as shipped
// (gateway.yaml, the default catalog): by default the runner opens a message thread (`thread: {type: "create"}`) and
// then sends only the new tool_result. Neither cloud keeps threads and both refuse the unknown `thread` key, a 400
// the runner cannot get past; the gateway refuses it as on a translated route (thread_unsupported_request), so the
// runner goes on unthreaded with the whole history and the loop completes.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import Anthropic from "@anthropic-ai/sdk";
import { providerEnv, shippedConfig, SHIPPED_KEY } from "./helpers/shipped-config.ts";
import { startTestGateway, type TestGateway } from "./helpers/gateway.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";
import { FAKE_AWS, startFakeBedrock, type FakeBedrock } from "./upstreams/bedrock.ts";
import { makeServiceAccount, startFakeTokenEndpoint, type FakeTokenEndpoint } from "./upstreams/vertex-auth.ts";
import { startFakeVertex, type FakeVertex } from "./upstreams/vertex.ts";

const MODEL = "anthropic/claude-haiku-4.5";

let openai: FakeOpenAI;
let anthropic: FakeAnthropic;
let bedrock: FakeBedrock;
let tokens: FakeTokenEndpoint;
let vertex: FakeVertex;
let gw: TestGateway;

beforeAll(async () => {
  [openai, anthropic, bedrock, tokens] = await Promise.all([startFakeOpenAI(), startFakeAnthropic(), startFakeBedrock(), startFakeTokenEndpoint()]);
  const sa = makeServiceAccount(tokens.tokenUri, { projectId: "runner-project" });
  tokens.trust(sa);
  vertex = await startFakeVertex(tokens, { project: "runner-project", location: "us-east5" });
  const config = shippedConfig({ openai: openai.baseUrl, anthropic: anthropic.baseUrl });
  config.providers.bedrock.base_url = bedrock.baseUrl;
  config.providers.vertex.base_url = vertex.baseUrl;
  const env = {
    ...providerEnv(config),
    AWS_ACCESS_KEY_ID: FAKE_AWS.accessKeyId, AWS_SECRET_ACCESS_KEY: FAKE_AWS.secretAccessKey, AWS_REGION: FAKE_AWS.region,
    GOOGLE_APPLICATION_CREDENTIALS: sa.file, VERTEX_LOCATION: "us-east5",
  };
  gw = await startTestGateway(config, { env });
}, 30_000);

afterAll(async () => {
  await gw?.close();
  await Promise.all([openai?.close(), anthropic?.close(), bedrock?.close(), vertex?.close(), tokens?.close()]);
});

/** Runs the SDK's tool runner (its default: threads) on the model served by `provider` only. */
async function runTools(provider: string) {
  const client = new Anthropic({ apiKey: SHIPPED_KEY, baseURL: `${gw.url}/api`, maxRetries: 0 });
  const ran: string[] = [];
  const getWeather = {
    name: "get_weather", description: "The weather in a city",
    input_schema: { type: "object" as const, properties: { city: { type: "string" } }, required: ["city"] },
    run: async (input: { city: string }) => { ran.push(input.city); return "21C and sunny"; },
  };
  const final = await client.beta.messages.toolRunner({
    model: MODEL, max_tokens: 300, max_iterations: 4, messages: [{ role: "user", content: "Weather in Paris?" }], tools: [getWeather],
    providerOptions: { gateway: { only: [provider] } },
  } as never).runUntilDone();
  return { final, ran };
}

describe("the SDK tool runner, threads on by default, on Claude in the clouds", () => {
  it("Bedrock InvokeModel: the loop completes, every call carries the whole history and no thread", async () => {
    const from = bedrock.requests.length;
    const { final, ran } = await runTools("bedrock");
    expect(ran.length).toBeGreaterThan(0);
    expect(final.stop_reason).toBe("end_turn");
    const sent = bedrock.requests.slice(from);
    expect(sent.length).toBe(2); // the tool call and the answer: the refused thread never reached Bedrock
    expect(sent.every((r) => r.body.thread === undefined)).toBe(true);
    expect(sent[1]!.body.messages[0]).toEqual({ role: "user", content: "Weather in Paris?" });
  });

  it("Vertex: the loop completes, every call carries the whole history and no thread", async () => {
    const from = vertex.requests.length;
    const { final, ran } = await runTools("vertex");
    expect(ran.length).toBeGreaterThan(0);
    expect(final.stop_reason).toBe("end_turn");
    const sent = vertex.requests.slice(from);
    expect(sent.length).toBe(2);
    expect(sent.every((r) => r.body.thread === undefined)).toBe(true);
    expect(sent[1]!.body.messages[0]).toEqual({ role: "user", content: "Weather in Paris?" });
  });
});
