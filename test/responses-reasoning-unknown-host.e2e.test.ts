// A Responses client's tool loop on a reasoning model of an OpenAI-compatible host the gateway does not know (xAI,
// Fireworks, DeepInfra, Databricks… behind a base_url with no reasoning_field) that refuses fields outside its API, as
// strict hosts do ("Extra inputs are not permitted"). Turn 1 reasons and calls; turn 2 sends the outputs back, chained
// by previous_response_id or with the output echoed back (Codex, store: false). Such a host gets the request as the
// client sent it: no reasoning field on the assistant message, which the client never sent, and it answers. With
// `reasoning_field: none` nothing goes back either, and nothing is named dropped that the client did not send.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import OpenAI from "openai";
import type { FakeOpenAI } from "./upstreams/openai.ts";
import { testKey, type TestGateway } from "./helpers/gateway.ts";
import { functionCallOutputs } from "./helpers/responses-fixtures.ts";
import { STRICT_HOSTS, sentReasoningFields, startStrictHostGateway } from "./helpers/strict-host-gateway.ts";

const KEY = testKey("responses-reason-unknown");
let up: FakeOpenAI;
let gw: TestGateway;
let client: OpenAI;

const tools: OpenAI.Responses.Tool[] = [
  { type: "function", name: "get_weather", strict: false, parameters: { type: "object", properties: { city: { type: "string" } } } },
];
const reasoning = { effort: "medium" } as const;

beforeAll(async () => {
  ({ up, gw } = await startStrictHostGateway(KEY));
  client = new OpenAI({ apiKey: KEY, baseURL: gw.baseURL, maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
  await up?.close();
});

async function firstTurn(model: string, store: boolean) {
  const r1 = await client.responses.create({ model, input: "Weather in Paris?", tools, reasoning, store });
  expect(r1.output.map((o) => o.type)).toEqual(["reasoning", "function_call"]);
  return r1;
}

describe.each(STRICT_HOSTS)("Responses tool loop on a strict host with %s", (_label, model) => {
  it("chained by previous_response_id: the host gets no reasoning field and answers, nothing named dropped", async () => {
    const r1 = await firstTurn(model, true);
    const { data: r2, response } = await client.responses.create({ model, previous_response_id: r1.id, input: functionCallOutputs(r1), tools, reasoning }).withResponse();
    expect(r2.status).toBe("completed");
    expect(r2.output_text).not.toBe("");
    expect(sentReasoningFields(up)).toEqual([]);
    expect(response.headers.get("x-mg-dropped-params")).toBeNull();
  });

  it("the output echoed back (Codex, store: false): the same", async () => {
    const r1 = await firstTurn(model, false);
    const input: OpenAI.Responses.ResponseInputItem[] = [{ role: "user", content: "Weather in Paris?" }, ...(r1.output as OpenAI.Responses.ResponseInputItem[]), ...functionCallOutputs(r1)];
    const { data: r2, response } = await client.responses.create({ model, input, tools, reasoning, store: false }).withResponse();
    expect(r2.status).toBe("completed");
    expect(r2.output_text).not.toBe("");
    expect(sentReasoningFields(up)).toEqual([]);
    expect(response.headers.get("x-mg-dropped-params")).toBeNull();
  });
});
