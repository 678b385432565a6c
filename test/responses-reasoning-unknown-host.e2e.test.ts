// A Responses client's tool loop on a reasoning model of an OpenAI-compatible host the gateway does not know (xAI,
// Fireworks, DeepInfra, Databricks… behind a base_url with no reasoning_field) that refuses fields outside its API, as
// strict hosts do ("Extra inputs are not permitted"). Turn 1 reasons and calls; turn 2 sends the outputs back, chained
// by previous_response_id or with the output echoed back (Codex, store: false). Such a host gets the request as the
// client sent it: no reasoning field on the assistant message, which the client never sent, and it answers. With
// `reasoning_field: none` nothing goes back either, and nothing is named dropped that the client did not send.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import OpenAI from "openai";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { REASONING_FIELDS, refuseReasoningBack } from "./upstreams/openai-strict-host.ts";
import { keyEntry, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";

const KEY = testKey("responses-reason-unknown");
const UNKNOWN = "strict/reasoner";
const NONE = "quiet/reasoner";
let up: FakeOpenAI;
let gw: TestGateway;
let client: OpenAI;

const tools: OpenAI.Responses.Tool[] = [
  { type: "function", name: "get_weather", strict: false, parameters: { type: "object", properties: { city: { type: "string" } } } },
];
const reasoning = { effort: "medium" } as const;

beforeAll(async () => {
  up = await startFakeOpenAI();
  // The host thinks aloud in `reasoning` (as vLLM and gpt-oss hosts do) but takes no reasoning back.
  up.reasoning = "reasoning";
  refuseReasoningBack(up);
  // Both on loopback: no known host's convention applies.
  const endpoint = (provider: string) => [{ provider, model: "reasoner-1", pricing: { input: "0.000001", output: "0.000002" } }];
  gw = await startTestGateway({
    providers: {
      strict: { protocol: "openai", base_url: up.baseUrl, api_key: "sk-fake-upstream" },
      quiet: { protocol: "openai", base_url: up.baseUrl, api_key: "sk-fake-upstream", reasoning_field: "none" },
    },
    models: {
      [UNKNOWN]: { type: "language", tags: ["tool-use", "reasoning"], endpoints: endpoint("strict") },
      [NONE]: { type: "language", tags: ["tool-use", "reasoning"], endpoints: endpoint("quiet") },
    },
    projects: { acme: { keys: [keyEntry("ci", KEY)] } },
  });
  client = new OpenAI({ apiKey: KEY, baseURL: gw.baseURL, maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
  await up?.close();
});

const outputs = (r: OpenAI.Responses.Response): OpenAI.Responses.ResponseInputItem[] =>
  r.output.filter((o) => o.type === "function_call").map((c) => ({ type: "function_call_output", call_id: c.call_id, output: `result of ${c.name}` }));

/** The assistant message of the turn the host got last. */
const sentAssistant = () => up.requests.at(-1)!.body.messages.find((m: any) => m.role === "assistant");

async function firstTurn(model: string, store: boolean) {
  const r1 = await client.responses.create({ model, input: "Weather in Paris?", tools, reasoning, store });
  expect(r1.output.map((o) => o.type)).toEqual(["reasoning", "function_call"]);
  return r1;
}

describe.each([
  ["no reasoning_field (an unknown host)", UNKNOWN],
  ["reasoning_field: none", NONE],
])("Responses tool loop on a strict host with %s", (_label, model) => {
  it("chained by previous_response_id: the host gets no reasoning field and answers, nothing named dropped", async () => {
    const r1 = await firstTurn(model, true);
    const { data: r2, response } = await client.responses.create({ model, previous_response_id: r1.id, input: outputs(r1), tools, reasoning }).withResponse();
    expect(r2.status).toBe("completed");
    expect(r2.output_text).not.toBe("");
    expect(Object.keys(sentAssistant()).filter((k) => REASONING_FIELDS.includes(k))).toEqual([]);
    expect(response.headers.get("x-mg-dropped-params")).toBeNull();
  });

  it("the output echoed back (Codex, store: false): the same", async () => {
    const r1 = await firstTurn(model, false);
    const input: OpenAI.Responses.ResponseInputItem[] = [{ role: "user", content: "Weather in Paris?" }, ...(r1.output as OpenAI.Responses.ResponseInputItem[]), ...outputs(r1)];
    const { data: r2, response } = await client.responses.create({ model, input, tools, reasoning, store: false }).withResponse();
    expect(r2.status).toBe("completed");
    expect(r2.output_text).not.toBe("");
    expect(Object.keys(sentAssistant()).filter((k) => REASONING_FIELDS.includes(k))).toEqual([]);
    expect(response.headers.get("x-mg-dropped-params")).toBeNull();
  });
});
