// The two agent SDKs that speak the Responses API, against /v1/responses on the gateway as shipped (SQLite, full
// default pipeline), on an OpenAI-backed, an Anthropic-backed and a Gemini-backed model (faithful fakes):
// - the OpenAI Agents SDK (@openai/agents): an Agent with a function tool; by default the SDK sends the whole
//   conversation back each turn, with `previousResponseId` it sends only the new items and chains by id;
// - the Vercel AI SDK's default `openai(model)` provider (= Responses API): generateText looping over a tool and
//   streamText. With store (the default) it sends `item_reference` items for the assistant messages of stored
//   responses instead of their content; with store: false it sends everything.
// Then Claude thinking across a tool loop through both SDKs (the signed thinking block must reach Anthropic again).
// Every body the clients send is recorded (a fetch wrapper), so the tests assert what the SDKs actually do.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import OpenAI from "openai";
import { z } from "zod";
import { Agent, run, setDefaultOpenAIClient, setOpenAIAPI, setTracingDisabled, tool } from "@openai/agents";
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, stepCountIs, streamText, tool as aiTool } from "ai";
import { BACKENDS, KEY, PROJECT, startResponsesClients, type ResponsesClientsEnv } from "./helpers/responses-clients.ts";

let env: ResponsesClientsEnv;
/** The JSON bodies the SDKs POSTed to /responses, in order. */
const sent: any[] = [];
const recording = (async (input: RequestInfo | URL, init?: RequestInit) => {
  if (init?.method === "POST" && String(input).endsWith("/responses") && typeof init.body === "string") sent.push(JSON.parse(init.body));
  return fetch(input, init);
}) as typeof fetch;
let provider: ReturnType<typeof createOpenAI>;

beforeAll(async () => {
  env = await startResponsesClients();
  setTracingDisabled(true);
  setOpenAIAPI("responses");
  setDefaultOpenAIClient(new OpenAI({ apiKey: KEY, baseURL: env.gw.baseURL, maxRetries: 0, fetch: recording }));
  provider = createOpenAI({ baseURL: env.gw.baseURL, apiKey: KEY, fetch: recording });
});
afterAll(async () => {
  await env?.close();
});

/** What a block of code sent: the bodies recorded while it ran. */
async function sending<T>(f: () => Promise<T>): Promise<{ result: T; bodies: any[] }> {
  const from = sent.length;
  const result = await f();
  return { result, bodies: sent.slice(from) };
}

const ledgerRows = async (model: string) =>
  (await env.gw.gateway.store.ledger({ project: PROJECT })).filter((e) => e.endpoint === "responses" && e.model === model);

describe.each(BACKENDS)("OpenAI Agents SDK on $model", ({ model, upstream, path }) => {
  function weatherAgent(calls: string[]) {
    const getWeather = tool({
      name: "get_weather", description: "Weather in a city", parameters: z.object({ city: z.string() }),
      execute: async ({ city }) => {
        calls.push(city);
        return `sunny, 21C in ${city}`;
      },
    });
    return new Agent({ name: "weather", instructions: "Answer questions about the weather.", model, tools: [getWeather] });
  }

  it("run(agent, input): the tool runs and its output reaches the model; the final output is the model's answer", async () => {
    const calls: string[] = [];
    const rowsBefore = (await ledgerRows(model)).length;
    const { result, bodies } = await sending(() => run(weatherAgent(calls), "Weather in Paris?"));
    expect(calls).toEqual(["Paris"]);
    expect(typeof result.finalOutput).toBe("string");
    expect(result.finalOutput!.length).toBeGreaterThan(0);
    // Two model turns; the SDK sent the whole conversation back the second time (no previous_response_id).
    expect(bodies).toHaveLength(2);
    expect(bodies[1].previous_response_id).toBeUndefined();
    expect(bodies[1].input.map((i: any) => i.type ?? "message")).toEqual(expect.arrayContaining(["function_call", "function_call_output"]));
    expect(bodies[1].input.find((i: any) => i.type === "function_call_output").output).toContain("sunny, 21C in Paris");
    // The tool output made it to the upstream, in its own protocol, and both turns are billed.
    expect(env.requestsOf(upstream).at(-1)!.path).toMatch(path);
    expect(JSON.stringify(env.requestsOf(upstream).at(-1)!.body)).toContain("sunny, 21C in Paris");
    expect(result.lastResponseId).toMatch(/^resp_/);
    expect((await ledgerRows(model)).length).toBe(rowsBefore + 2);
  });

  it("run(agent, input, { stream: true }): streamed turns, the tool runs, the final output arrives", async () => {
    const calls: string[] = [];
    const { result, bodies } = await sending(async () => {
      const r = await run(weatherAgent(calls), "Weather in Paris?", { stream: true });
      let text = "";
      for await (const e of r) if (e.type === "raw_model_stream_event" && e.data.type === "output_text_delta") text += e.data.delta;
      await r.completed;
      return { r, text };
    });
    expect(bodies.every((b) => b.stream === true)).toBe(true);
    expect(calls).toEqual(["Paris"]);
    expect(result.r.finalOutput!.length).toBeGreaterThan(0);
    expect(result.text).toContain(result.r.finalOutput);
  });

  it("a second run continuing with previousResponseId: only the new input is sent, chained by id", async () => {
    const calls: string[] = [];
    const agent = weatherAgent(calls);
    const first = await run(agent, "Weather in Paris?");
    const { result, bodies } = await sending(() => run(agent, "And in Paris tomorrow?", { previousResponseId: first.lastResponseId }));
    expect(bodies[0].previous_response_id).toBe(first.lastResponseId);
    expect(JSON.stringify(bodies[0].input)).not.toContain("Weather in Paris?");
    expect(result.finalOutput!.length).toBeGreaterThan(0);
    expect(calls.length).toBeGreaterThan(0);
    // The gateway rebuilt the conversation (or chained natively): the first question reached the upstream again.
    const upstreamBody = env.requestsOf(upstream).at(-1)!.body;
    if (!upstreamBody.previous_response_id) expect(JSON.stringify(upstreamBody)).toContain("Weather in Paris?");
  });
});

describe.each(BACKENDS)("Vercel AI SDK (@ai-sdk/openai default provider) on $model", ({ model, upstream, path }) => {
  const tools = {
    get_weather: aiTool({
      description: "Weather in a city", inputSchema: z.object({ city: z.string() }),
      execute: async ({ city }) => ({ city, temp: 21 }),
    }),
  };

  it("generateText with a tool, store: false: the loop sends every item back and ends with the model's answer", async () => {
    const { result, bodies } = await sending(() => generateText({
      model: provider(model), prompt: "Weather in Paris?", tools, stopWhen: stepCountIs(3),
      providerOptions: { openai: { store: false } }, maxRetries: 0,
    }));
    expect(result.steps).toHaveLength(2);
    expect(result.steps[0]!.toolResults[0]).toMatchObject({ toolName: "get_weather", output: { city: "Paris", temp: 21 } });
    expect(result.text.length).toBeGreaterThan(0);
    expect(result.finishReason).toBe("stop");
    expect(bodies.map((b) => b.store)).toEqual([false, false]);
    expect(JSON.stringify(bodies[1].input)).not.toContain("item_reference");
    expect(JSON.stringify(env.requestsOf(upstream).at(-1)!.body)).toContain("temp");
  });

  // With store (the AI SDK's default) an assistant message of a stored response comes back as an item_reference:
  // the Anthropic fake writes text before its tool call, so there the loop depends on the gateway resolving it.
  it("generateText with a tool, store on (default): item_references to stored items are resolved", async () => {
    const { result, bodies } = await sending(() => generateText({ model: provider(model), prompt: "Weather in Paris?", tools, stopWhen: stepCountIs(3), maxRetries: 0 }));
    expect(result.steps).toHaveLength(2);
    expect(result.steps[0]!.toolResults).toHaveLength(1);
    expect(result.text.length).toBeGreaterThan(0);
    const first = result.steps[0]!.response.body as any;
    const refs = bodies[1].input.filter((i: any) => i.type === "item_reference").map((i: any) => i.id);
    // Every message item the first response had is referenced, not repeated; the upstream got its text anyway.
    const messages = (first?.output ?? []).filter((o: any) => o.type === "message");
    expect(refs).toEqual(messages.map((m: any) => m.id));
    if (upstream === "anthropic") expect(refs).toHaveLength(1); // that fake's text before the tool call
    for (const m of messages) expect(JSON.stringify(env.requestsOf(upstream).at(-1)!.body)).toContain(m.content[0].text);
  });

  it("streamText: the text arrives in deltas, with the finish reason and usage", async () => {
    const { result, bodies } = await sending(async () => {
      const s = streamText({ model: provider(model), prompt: "Hello", maxRetries: 0 });
      let text = "";
      let parts = 0;
      for await (const d of s.textStream) {
        text += d;
        parts++;
      }
      return { text, parts, finishReason: await s.finishReason, usage: await s.usage, response: await s.response };
    });
    expect(bodies[0]).toMatchObject({ stream: true, model });
    expect(result.parts).toBeGreaterThan(1);
    expect(result.text).toMatch(/Hello from the fake/);
    expect(result.finishReason).toBe("stop");
    expect(result.usage.outputTokens).toBeGreaterThan(0);
    expect(result.usage.inputTokens).toBeGreaterThan(0);
    expect(result.response.id).toMatch(/^resp_/);
    const up = env.requestsOf(upstream).at(-1)!;
    expect(up.path).toMatch(path);
    expect(up.body.stream ?? up.path.includes("stream")).toBeTruthy();
  });
});

describe("Vercel AI SDK: Anthropic thinking across a tool loop", () => {
  // The AI SDK sends `reasoning` only for model ids it knows as reasoning models (o-series, gpt-5): forceReasoning
  // makes it send it for a Claude model too. With store on it refers to the first step's reasoning item by
  // item_reference (the gateway resolves it from the stored full output, signature included); with store: false it
  // asks for encrypted_content and sends the item back whole.
  const tools = {
    get_weather: aiTool({ description: "Weather in a city", inputSchema: z.object({ city: z.string() }), execute: async ({ city }) => ({ city, temp: 21 }) }),
  };
  const cases = [false, true].flatMap((store) => [false, true].map((streamed) => ({ store, streamed })));
  it.each(cases)("store: $store, streamed: $streamed — the signed thinking block goes back first in its turn", async ({ store, streamed }) => {
    const opts = {
      model: provider("anthropic/claude-sonnet-4"), prompt: "Weather in Paris?", tools, stopWhen: stepCountIs(3), maxRetries: 0, maxOutputTokens: 4000,
      providerOptions: { openai: { forceReasoning: true, reasoningEffort: "low", reasoningSummary: "auto", store } },
    };
    const { result, bodies } = await sending(async () => {
      if (!streamed) {
        const r = await generateText(opts);
        return { steps: r.steps.length, text: r.text, reasoning: r.reasoningText };
      }
      const s = streamText(opts);
      let text = "";
      for await (const d of s.textStream) text += d;
      return { steps: (await s.steps).length, text, reasoning: await s.reasoningText };
    });
    expect(result.steps).toBe(2);
    expect(result.text).toContain("The weather is sunny.");
    expect(result.reasoning?.length).toBeGreaterThan(0);
    expect(bodies[0].reasoning).toMatchObject({ effort: "low" });
    const reasoningSent = bodies[1].input.find((i: any) => i.type === "reasoning" || (i.type === "item_reference" && String(i.id).startsWith("rs_")));
    expect(reasoningSent?.type).toBe(store ? "item_reference" : "reasoning");
    if (!store) expect(reasoningSent.encrypted_content).toMatch(/^mgr1\./);
    // Anthropic got its own thinking block back, signature and all, before the text and tool_use of that turn.
    const turn = env.anthropic.requests.at(-1)!.body.messages.find((m: any) => m.role === "assistant");
    expect(turn.content.map((b: any) => b.type)).toEqual(["thinking", "text", "tool_use"]);
    expect(turn.content[0].signature).toEqual(expect.any(String));
  });
});

describe("OpenAI Agents SDK: Anthropic thinking across a tool loop", () => {
  // The SDK sends the first turn's reasoning item back as it got it. With store: false the gateway showed it
  // encrypted_content (Anthropic's signed thinking), so the item carries it back. With the default store it comes back
  // by id with its summary only (encrypted_content was not asked for), as OpenAI allows for stored responses: the
  // gateway restores it from the stored item of that id.
  function thinkingAgent(store: boolean | undefined, calls: string[]) {
    const getWeather = tool({
      name: "get_weather", description: "Weather in a city", parameters: z.object({ city: z.string() }),
      execute: async ({ city }) => {
        calls.push(city);
        return `sunny in ${city}`;
      },
    });
    return new Agent({
      name: "weather", instructions: "Answer questions about the weather.", model: "anthropic/claude-sonnet-4", tools: [getWeather],
      modelSettings: { reasoning: { effort: "low" }, maxTokens: 4000, ...(store === undefined ? {} : { store }) },
    });
  }
  async function loop(store: boolean | undefined, streamed: boolean) {
    const calls: string[] = [];
    const { result, bodies } = await sending(async () => {
      if (!streamed) return run(thinkingAgent(store, calls), "Weather in Paris?");
      const r = await run(thinkingAgent(store, calls), "Weather in Paris?", { stream: true });
      for await (const _ of r);
      await r.completed;
      return r;
    });
    expect(calls).toEqual(["Paris"]);
    expect(result.finalOutput).toContain("The weather is sunny.");
    expect(bodies[1].input.find((i: any) => i.type === "reasoning")).toMatchObject({ id: expect.stringMatching(/^rs_/) });
    const turn = env.anthropic.requests.at(-1)!.body.messages.find((m: any) => m.role === "assistant");
    expect(turn.content.map((b: any) => b.type)).toEqual(["thinking", "text", "tool_use"]);
    expect(turn.content[0].signature).toEqual(expect.any(String));
    return bodies;
  }

  it.each([false, true])("store: false (streamed: %s): the reasoning item goes back with its encrypted_content", async (streamed) => {
    const bodies = await loop(false, streamed);
    expect(bodies[1].input.find((i: any) => i.type === "reasoning").encrypted_content).toMatch(/^mgr1\./);
  });

  it("default store: the reasoning item goes back by id only and the gateway restores it from the store", async () => {
    const bodies = await loop(undefined, false);
    expect(bodies[1].input.find((i: any) => i.type === "reasoning").encrypted_content).toBeUndefined();
    await loop(undefined, true);
  });
});
