// The chat counter against figures the OpenAI API itself reported as usage.prompt_tokens for fixed requests
// (openai-cookbook, "How to count tokens with tiktoken", sections 6 and 7).
import { describe, expect, it } from "vitest";
import { MAX_BPE_BYTES, chatPromptTokens, encodingFor, openaiCountChatTokens, openaiCountTokens, tokenizer, type EncodingName } from "./count-tokens.ts";
import { TOKEN_COUNT_HEADER } from "../../core/contracts/provider.ts";

const jargon = [
  { role: "system", content: "You are a helpful, pattern-following assistant that translates corporate jargon into plain English." },
  { role: "system", name: "example_user", content: "New synergies will help drive top-line growth." },
  { role: "system", name: "example_assistant", content: "Things working well together will increase revenue." },
  { role: "system", name: "example_user", content: "Let's circle back when we have more bandwidth to touch base on opportunities for increased leverage." },
  { role: "system", name: "example_assistant", content: "Let's talk later when we're less busy about how to do better." },
  { role: "user", content: "This late pivot means we don't have time to boil the ocean for the client deliverable." },
];

const weatherTool = {
  type: "function",
  function: {
    name: "get_current_weather",
    description: "Get the current weather in a given location",
    parameters: {
      type: "object",
      properties: {
        location: { type: "string", description: "The city and state, e.g. San Francisco, CA" },
        unit: { type: "string", description: "The unit of temperature to return", enum: ["celsius", "fahrenheit"] },
      },
      required: ["location"],
    },
  },
};
const weatherMessages = [
  { role: "system", content: "You are a helpful assistant that can answer to questions about the weather." },
  { role: "user", content: "What's the weather like in San Francisco?" },
];

async function count(body: { messages: any[]; tools?: any[] }, encoding: EncodingName) {
  return chatPromptTokens(body, await tokenizer(encoding), encoding);
}

describe("chatPromptTokens", () => {
  it("messages with names: 124 on gpt-4o (o200k_base), 129 on gpt-4 (cl100k_base), as the API billed", async () => {
    expect(await count({ messages: jargon }, "o200k_base")).toBe(124);
    expect(await count({ messages: jargon }, "cl100k_base")).toBe(129);
  });

  it("a function with an enum property: 101 on gpt-4o, 105 on gpt-4, as the API billed", async () => {
    expect(await count({ messages: weatherMessages, tools: [weatherTool] }, "o200k_base")).toBe(101);
    expect(await count({ messages: weatherMessages, tools: [weatherTool] }, "cl100k_base")).toBe(105);
  });

  it("text that looks like a special token is counted as text, not refused", async () => {
    const n = await count({ messages: [{ role: "user", content: "end <|endoftext|> here" }] }, "o200k_base");
    expect(n).toBeGreaterThan(3 + 3 + 1 + 3);
  });

  it("tool calls, tool results and images add to the count", async () => {
    const base = { role: "user", content: "Weather?" };
    const plain = await count({ messages: [base] }, "o200k_base");
    const withCall = await count({ messages: [base, { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "get_current_weather", arguments: "{\"location\":\"Paris\"}" } }] }, { role: "tool", tool_call_id: "call_1", content: "18°C" }] }, "o200k_base");
    expect(withCall).toBeGreaterThan(plain + 10);
    const image = (detail?: string) => ({ role: "user", content: [{ type: "text", text: "Weather?" }, { type: "image_url", image_url: { url: "data:image/png;base64,AAAA", ...(detail ? { detail } : {}) } }] });
    expect(await count({ messages: [image("low")] }, "o200k_base")).toBe(plain + 85);
    expect(await count({ messages: [image()] }, "o200k_base")).toBe(plain + 765);
  });
});

describe("openaiCountChatTokens", () => {
  it("counts a chat body as sent (a translated Responses create's), its web search options taken as chat serves them", async () => {
    const target = { modelId: "openai/gpt-4o", upstreamModel: "gpt-4o", provider: "up", pricing: {} } as never;
    const r = await openaiCountChatTokens({ messages: weatherMessages, tools: [weatherTool], web_search_options: {} } as never, target, "up");
    expect(r).toMatchObject({ kind: "json", body: { input_tokens: 101 }, headers: { [TOKEN_COUNT_HEADER]: "tokenizer:o200k_base" } });
  });
});

describe("openaiCountTokens on hostile and very large inputs (issue 25)", () => {
  const target = { modelId: "openai/gpt-4o", upstreamModel: "gpt-4o", provider: "up", pricing: {} };
  const answer = async (content: string) => {
    const r = await openaiCountTokens({ model: "openai/gpt-4o", messages: [{ role: "user", content }] }, target, "up");
    if (r.kind !== "json") throw new Error("not json");
    return { tokens: (r.body as any).input_tokens as number, source: r.headers?.[TOKEN_COUNT_HEADER] };
  };

  it("128 KiB of one letter is counted with the encoding (8 letters a token), not refused", async () => {
    const { tokens, source } = await answer("a".repeat(128 * 1024));
    expect(source).toBe("tokenizer:o200k_base");
    expect(tokens).toBeGreaterThanOrEqual(16_384);
    expect(tokens).toBeLessThan(16_384 + 20);
  });

  it("past MAX_BPE_BYTES of text the count is the character estimate, labelled, and errs high", async () => {
    const sentence = "Counting a very long conversation with the gateway's estimate. ";
    const prose = sentence.repeat(Math.ceil((MAX_BPE_BYTES + 1) / sentence.length));
    const { tokens, source } = await answer(prose);
    expect(source).toBe("estimate:chars");
    expect(tokens).toBeGreaterThanOrEqual((await tokenizer("o200k_base"))(prose));
  });
});

describe("encodingFor", () => {
  const of = (modelId: string, upstreamModel = modelId.split("/")[1]!) => encodingFor({ modelId, upstreamModel });
  it("o200k_base for gpt-4o, 4.1, 5, o-series and gpt-oss; cl100k_base for gpt-4 and gpt-3.5", () => {
    for (const id of ["openai/gpt-4o-mini", "openai/gpt-4.1", "openai/gpt-5", "openai/o4-mini", "openai/o1", "groq/gpt-oss-120b", "openai/chatgpt-4o-latest"]) {
      expect(of(id), id).toEqual({ encoding: "o200k_base", exact: true });
    }
    for (const id of ["openai/gpt-4", "openai/gpt-4-turbo", "openai/gpt-3.5-turbo"]) expect(of(id), id).toEqual({ encoding: "cl100k_base", exact: true });
  });

  it("an Azure deployment is known by its public id; other models are an o200k_base estimate", () => {
    expect(of("openai/gpt-4o", "my-prod-deployment")).toEqual({ encoding: "o200k_base", exact: true });
    expect(of("acme/house-model", "gpt-4-0613")).toEqual({ encoding: "cl100k_base", exact: true });
    expect(of("meta/llama-3.3-70b", "llama-3.3-70b-versatile")).toEqual({ encoding: "o200k_base", exact: false });
    expect(of("mistral/mistral-large")).toEqual({ encoding: "o200k_base", exact: false });
  });
});
