// The simulator behind sandbox keys, as an SDK feature sees it: a Messages stop sequence that cut the answer is
// stop_reason "stop_sequence" naming it (as Anthropic answers), JSON and streamed; what it takes but does not act on
// (log probabilities, thinking / reasoning effort) is named in x-mg-dropped-params in the client's own spelling, as a
// live model that leaves them out is.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { keyEntry, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";

const SANDBOX = testKey("sim-stop", true);
const CLAUDE = "anthropic/claude-sonnet-4.6";
const GPT = "openai/gpt-4o-mini";
let gw: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway({
    providers: { real: { protocol: "openai", base_url: "http://127.0.0.1:9", api_key: "sk-real" } },
    models: {
      [CLAUDE]: { tags: ["reasoning"], max_tokens: 64000, endpoints: [{ provider: "real", model: "claude-sonnet-4-6", pricing: { input: "1", output: "1" } }] },
      [GPT]: { endpoints: [{ provider: "real", model: "gpt-4o-mini", pricing: { input: "1", output: "1" } }] },
    },
    projects: { p: { keys: [keyEntry("sandbox", SANDBOX)] } },
  });
});
afterAll(async () => {
  await gw?.close();
});

const anthropic = () => new Anthropic({ apiKey: SANDBOX, baseURL: `${gw.url}/api`, maxRetries: 0 });
const openai = () => new OpenAI({ apiKey: SANDBOX, baseURL: gw.baseURL, maxRetries: 0 });
const hello = [{ role: "user" as const, content: "Hello" }];

describe("the simulator's Messages stop sequences", () => {
  it("a matched stop sequence ends the answer as stop_sequence naming the one that matched, JSON and streamed", async () => {
    // The simulated reply starts "Simulated reply from …": both sequences occur, "reply" first.
    const params = { model: CLAUDE, max_tokens: 2000, stop_sequences: ["from", "reply"], messages: hello };
    const msg = await anthropic().messages.create(params);
    expect(msg.content).toEqual([expect.objectContaining({ type: "text", text: "Simulated " })]);
    expect(msg).toMatchObject({ stop_reason: "stop_sequence", stop_sequence: "reply" });

    const streamed = await anthropic().messages.stream(params).finalMessage();
    expect(streamed).toMatchObject({ stop_reason: "stop_sequence", stop_sequence: "reply" });

    // No sequence matched: the end of the turn, as before.
    const plain = await anthropic().messages.create({ ...params, stop_sequences: ["never-in-the-reply"] });
    expect(plain).toMatchObject({ stop_reason: "end_turn", stop_sequence: null });
  });
});

describe("what the simulator ignores is named", () => {
  it("a Messages client's thinking on a reasoning model", async () => {
    const { response } = await anthropic().messages.create({ model: CLAUDE, max_tokens: 2000, thinking: { type: "enabled", budget_tokens: 1024 }, messages: hello }).withResponse();
    expect(response.headers.get("x-mg-dropped-params")?.split(",")).toContain("thinking");
  });

  it("a chat client's logprobs and top_logprobs, JSON and streamed; nothing named when they ask for nothing", async () => {
    const { data, response } = await openai().chat.completions.create({ model: GPT, messages: hello, logprobs: true, top_logprobs: 2 }).withResponse();
    expect(data.choices[0]!.logprobs).toBeNull();
    expect(response.headers.get("x-mg-dropped-params")?.split(",").sort()).toEqual(["logprobs", "top_logprobs"]);
    const streamed = await openai().chat.completions.create({ model: GPT, messages: hello, logprobs: true, stream: true }).withResponse();
    for await (const _ of streamed.data);
    expect(streamed.response.headers.get("x-mg-dropped-params")).toBe("logprobs");
    const { response: plain } = await openai().chat.completions.create({ model: GPT, messages: hello, logprobs: false }).withResponse();
    expect(plain.headers.get("x-mg-dropped-params")).toBeNull();
  });

  it("a Responses client's reasoning.effort on a reasoning model, in its own spelling", async () => {
    const { response } = await openai().responses.create({ model: CLAUDE, input: "Hello", reasoning: { effort: "low" } }).withResponse();
    expect(response.headers.get("x-mg-dropped-params")?.split(",")).toContain("reasoning.effort");
  });
});
