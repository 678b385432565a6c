// A tool conversation moved onto Mistral, through the gateway as it ships (gateway.yaml, the default catalog, the full
// pipeline), with a fake Mistral that refuses, as Mistral does, any tool-call id but 9 letters or digits: a Messages
// client's conversation on Claude whose Anthropic endpoint is overloaded (529) is served by the Mistral fallback it
// named in providerOptions.gateway.models, its toolu_ ids sent to Mistral as 9 letters or digits, each result paired
// with its call; and a chat client's history from another provider replayed on Mistral is served likewise.
import type { ServerResponse } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";
import { enforceMistralToolIds, idsMistralRefuses, MISTRAL_TOOL_ID } from "./upstreams/mistral-tool-ids.ts";
import { startTestGateway, type TestGateway } from "./helpers/gateway.ts";
import { providerEnv, shippedConfig, SHIPPED_KEY } from "./helpers/shipped-config.ts";

let openai: FakeOpenAI;
let mistral: FakeOpenAI;
let anthropic: FakeAnthropic;
let gw: TestGateway;

beforeAll(async () => {
  [openai, mistral, anthropic] = await Promise.all([startFakeOpenAI(), startFakeOpenAI(), startFakeAnthropic()]);
  enforceMistralToolIds(mistral);
  const config = shippedConfig({ openai: openai.baseUrl, anthropic: anthropic.baseUrl });
  // The fake listens on loopback, which says nothing about the host: the provider names the conventions of
  // api.mistral.ai, which the shipped provider's base_url is recognised by.
  config.providers.mistral = { ...config.providers.mistral, base_url: mistral.baseUrl, reasoning_field: "none", unknown_fields: "refused", tool_call_ids: "mistral" };
  gw = await startTestGateway(config, { env: { ...providerEnv(config), MISTRAL_API_KEY: "sk-fake-upstream" } });
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([openai?.close(), mistral?.close(), anthropic?.close()]);
});

const weather = { name: "get_weather", description: "Weather of a city", input_schema: { type: "object" as const, properties: { city: { type: "string" } }, required: ["city"] } };

/** Answers as Mistral does when the model calls get_weather (Tokyo) with `id`. */
function answerWithCall(res: ServerResponse, model: string, id: string): true {
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify({
    id: "cmpl-1", object: "chat.completion", created: 1, model,
    choices: [{ index: 0, message: { role: "assistant", content: "", tool_calls: [{ id, type: "function", function: { name: "get_weather", arguments: "{\"city\":\"Tokyo\"}" } }] }, finish_reason: "tool_calls" }],
    usage: { prompt_tokens: 20, completion_tokens: 8, total_tokens: 28 },
  }));
  return true;
}

/** The ids of the calls and of the results Mistral was last sent. */
function lastSentToMistral() {
  const messages: any[] = mistral.requests.at(-1)!.body.messages;
  return { calls: messages.flatMap((m) => (m.tool_calls ?? []).map((c: any) => c.id)), results: messages.filter((m) => m.role === "tool").map((m) => m.tool_call_id) };
}

describe("tool-call ids on a Mistral model", () => {
  it("a Messages tool conversation on Claude, Anthropic overloaded (529): the Mistral fallback serves it, its ids made Mistral's", async () => {
    const client = new Anthropic({ apiKey: SHIPPED_KEY, baseURL: `${gw.url}/api`, maxRetries: 0 });
    // Overloaded for every attempt at Claude's endpoint (the gateway may retry it), cleared after.
    anthropic.failures.push(...Array.from({ length: 5 }, () => ({ kind: "status" as const, status: 529 })));
    const before = mistral.requests.length;
    try {
      const answer = await client.messages.create({
        model: "anthropic/claude-sonnet-4.5", max_tokens: 200, tools: [weather],
        messages: [
          { role: "user", content: "Weather in Paris and Lyon?" },
          { role: "assistant", content: [
            { type: "tool_use", id: "toolu_01A09q90qw90lq917835lq9", name: "get_weather", input: { city: "Paris" } },
            { type: "tool_use", id: "toolu_01B19q90qw90lq917835lq9", name: "get_weather", input: { city: "Lyon" } },
          ] },
          { role: "user", content: [
            { type: "tool_result", tool_use_id: "toolu_01A09q90qw90lq917835lq9", content: "9C" },
            { type: "tool_result", tool_use_id: "toolu_01B19q90qw90lq917835lq9", content: "11C" },
          ] },
        ],
        providerOptions: { gateway: { models: ["mistral/mistral-large"] } },
      } as never);
      expect(answer.content.find((b) => b.type === "text")).toBeDefined();
    } finally {
      anthropic.failures.length = 0;
    }
    expect(mistral.requests.length).toBe(before + 1);
    const { calls, results } = lastSentToMistral();
    expect(calls).toHaveLength(2);
    for (const id of calls) expect(id).toMatch(MISTRAL_TOOL_ID);
    expect(calls[0]).not.toBe(calls[1]);
    expect(results).toEqual(calls);
  });

  it("a chat client's history from another provider, replayed on Mistral: served, and Mistral's own ids reach the client as sent", async () => {
    const client = new OpenAI({ apiKey: SHIPPED_KEY, baseURL: gw.baseURL, maxRetries: 0 });
    const tools = [{ type: "function" as const, function: { name: "get_weather", parameters: weather.input_schema } }];
    // Mistral calls the tool again, with an id of its own.
    const enforce = mistral.hook!;
    mistral.hook = (rec, res) => enforce(rec, res) || answerWithCall(res, rec.body.model, "D681PevKs");
    const answer = await client.chat.completions.create({
      model: "mistral/mistral-large", tools,
      messages: [
        { role: "user", content: "Weather in Paris, then Tokyo?" },
        { role: "assistant", content: null, tool_calls: [{ id: "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q", type: "function", function: { name: "get_weather", arguments: "{\"city\":\"Paris\"}" } }] },
        { role: "tool", tool_call_id: "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q", content: "9C" },
        { role: "user", content: "And Tokyo?" },
      ],
    }).finally(() => { mistral.hook = enforce; });
    const sent = lastSentToMistral();
    expect(idsMistralRefuses(mistral.requests.at(-1)!.body)).toEqual([]);
    expect(sent.results).toEqual(sent.calls);
    expect(answer.choices[0]!.message.tool_calls?.map((c) => c.id)).toEqual(["D681PevKs"]);
  });
});
