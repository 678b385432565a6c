import { describe, expect, it } from "vitest";
import type { Target } from "../../core/contracts/provider.ts";
import { responsesToConverse } from "./responses-to-converse/index.ts";
import { messagesToConverse } from "./messages-to-converse/index.ts";
import { responsesToMessages } from "./responses-to-messages/index.ts";
import { responsesToGemini } from "./responses-to-gemini/index.ts";
import { messagesToGemini } from "./messages-to-gemini/index.ts";
import { geminiToMessages } from "./gemini-to-messages/index.ts";
import { chatToGemini } from "./chat-to-gemini/index.ts";
import { MAX_URLS } from "./chat-to-gemini/media-urls.ts";
import { GatewayError } from "../../core/errors.ts";
import { Unsupported, type Translator } from "../../core/contracts/translator.ts";
import { chainTranslators } from "./chain.ts";
import { responsesToChatFor } from "./responses-to-chat/index.ts";
import type { UrlFetchOptions } from "../../core/net/url-fetch.ts";

const llama: Target = { modelId: "meta/llama", provider: "bedrock", upstreamModel: "us.meta.llama3-3-70b-instruct-v1:0", pricing: {} };
const claude: Target = { modelId: "anthropic/claude", provider: "anthropic", upstreamModel: "claude-sonnet-4-5", pricing: {} };
const opts = (driverProtocol: string) => ({ cacheMarkers: true, cacheAuto: false, driverProtocol, provider: "p" });

describe("chained translators name what the inner half drops as the client sent it", () => {
  it("Responses clients: text.format, text.verbosity, top_logprobs (once), prompt_cache_key", () => {
    const body = {
      model: "m", input: "x", top_logprobs: 3, prompt_cache_key: "k",
      text: { verbosity: "low", format: { type: "json_schema", name: "o", schema: { type: "object", properties: {} } } },
    };
    const dropped = responsesToConverse.request(body, llama, opts("converse")).dropped;
    expect(dropped).toEqual(expect.arrayContaining(["text.format", "text.verbosity", "top_logprobs", "prompt_cache_key"]));
    expect(dropped).not.toContain("logprobs");
    expect(dropped).not.toContain("response_format");
    expect(new Set(dropped).size).toBe(dropped.length);
    expect(responsesToMessages.request(body, claude, opts("anthropic")).dropped).toContain("text.verbosity");
  });

  it("Responses clients: a web search that cannot go along is the web search tool they sent, not chat's web_search_options", () => {
    const body = { model: "m", input: "x", tools: [{ type: "function", name: "web_search", parameters: { type: "object", properties: {} } }, { type: "web_search" }] };
    const dropped = responsesToMessages.request(body, claude, opts("anthropic")).dropped;
    expect(dropped).toContain("tools[1]");
    expect(dropped).not.toContain("web_search_options");
  });

  it("Messages clients: output_config.format, top_k", () => {
    const body = { model: "m", max_tokens: 100, top_k: 5, output_config: { format: { type: "json_schema", schema: { type: "object", properties: {} } } }, messages: [{ role: "user", content: "x" }] };
    const dropped = messagesToConverse.request(body, llama, opts("converse")).dropped;
    expect(dropped).toEqual(expect.arrayContaining(["top_k", "output_config.format"]));
    expect(dropped).not.toContain("response_format");
  });
});

// Refusals of the inner half (chat -> upstream) name the field where the client can find it in what it sent: its
// protocol's spelling, and its own indices (a Messages system prompt, a Responses `instructions`, tool results split
// into tool messages and Responses namespaces flattened all shift chat's).
describe("what the inner half names during its download", () => {
  it("joins the chain's dropped list, named as the client sent it, once the download is done", async () => {
    // An inner half that learns a field's fate only from what a URL serves (claude-url-sources.ts does so).
    const inner: Translator = {
      native: false,
      request(body) {
        const dropped: string[] = [];
        return { op: "chat", body, dropped, state: undefined, download: async () => void dropped.push("messages[0].content[0].image_url", "messages[0].content[0].image_url") };
      },
      response: (json) => json, stream: (events) => events, error: (err) => err,
    };
    const chained = chainTranslators(responsesToChatFor("chat"), inner);
    const t = chained.request({ model: "m", input: [{ role: "user", content: [{ type: "input_image", image_url: "https://x/y.png" }] }] }, llama, opts("converse"));
    expect(t.dropped).toEqual([]);
    await t.download!({} as UrlFetchOptions, new AbortController().signal);
    expect(t.dropped).toEqual(["input[0].content[0].image_url"]);
  });
});

describe("a refusal of the inner half names the field the client sent", () => {
  const gemini: Target = { modelId: "google/gemini", provider: "gem", upstreamModel: "gemini-2.5-flash", pricing: {} };
  /** A schema Gemini's conversion refuses: more $refs inside one another than it inlines. */
  const refChain = () => {
    const defs: Record<string, unknown> = { C200: { type: "string" } };
    for (let i = 0; i < 200; i++) defs[`C${i}`] = { $ref: `#/$defs/C${i + 1}` };
    return { type: "object", properties: { x: { $ref: "#/$defs/C0" } }, $defs: defs };
  };
  const ok = { type: "object", properties: { a: { type: "string" } } };
  const refusal = (run: () => unknown): GatewayError => {
    try {
      run();
    } catch (e) {
      return e instanceof Unsupported ? e.error : (e as GatewayError);
    }
    throw new Error("no refusal");
  };
  const names = (err: GatewayError, field: string) => {
    expect(err).toBeInstanceOf(GatewayError);
    expect(err.status).toBe(400);
    expect(err.details?.field).toBe(field);
    expect(err.toJSON().error.param).toBe(field);
    expect(err.message.startsWith(`${field} `) || err.message.startsWith(`${field}: `)).toBe(true);
  };

  it("Messages client, Gemini upstream: a schema Gemini cannot take is tools[i].input_schema / output_config.format.schema", () => {
    const base = { model: "m", max_tokens: 100, system: "s", messages: [{ role: "user", content: "x" }] };
    names(refusal(() => messagesToGemini.request({ ...base, tools: [{ name: "a", input_schema: ok }, { name: "b", input_schema: refChain() }] }, gemini, opts("gemini"))), "tools[1].input_schema");
    names(refusal(() => messagesToGemini.request({ ...base, output_config: { format: { type: "json_schema", schema: refChain() } } }, gemini, opts("gemini"))), "output_config.format.schema");
  });

  it("Responses client, Gemini upstream: a namespaced tool's parameters and text.format.schema", () => {
    const base = { model: "m", instructions: "s", input: "x" };
    const tools = [{ type: "function", name: "a", parameters: ok }, { type: "namespace", name: "ns", tools: [{ type: "function", name: "b", parameters: ok }, { type: "function", name: "c", parameters: refChain() }] }];
    names(refusal(() => responsesToGemini.request({ ...base, tools }, gemini, opts("gemini"))), "tools[1].tools[1].parameters");
    names(refusal(() => responsesToGemini.request({ ...base, text: { format: { type: "json_schema", name: "o", schema: refChain() } } }, gemini, opts("gemini"))), "text.format.schema");
  });

  it("Responses client, Anthropic upstream: an image type Anthropic refuses is input[i].content[j].image_url (instructions and tool media shift chat's index)", () => {
    const bmp = "data:image/bmp;base64,Qk0=";
    const input = [
      { role: "user", content: [{ type: "input_text", text: "look" }, { type: "input_image", image_url: bmp }] },
    ];
    names(refusal(() => responsesToMessages.request({ model: "m", instructions: "s", input }, claude, opts("anthropic"))), "input[0].content[1].image_url");
    const loop = [
      { role: "user", content: "go" },
      { type: "function_call", call_id: "c1", name: "f", arguments: "{}" },
      { type: "function_call_output", call_id: "c1", output: [{ type: "input_text", text: "shot:" }, { type: "input_image", image_url: bmp }] },
    ];
    names(refusal(() => responsesToMessages.request({ model: "m", instructions: "s", input: loop, tools: [{ type: "function", name: "f", parameters: ok }] }, claude, opts("anthropic"))), "input[2].output[1].image_url");
  });

  it("Messages client, Bedrock upstream: an image URL that is not http(s) is messages[i].content[j].source.url (system, merged turns and tool results shift chat's index)", () => {
    const url = { type: "image", source: { type: "url", url: "ftp://x.test/a.png" } };
    const withSystem = { model: "m", max_tokens: 100, system: "s", messages: [{ role: "user", content: [{ type: "text", text: "look" }, url] }] };
    names(refusal(() => messagesToConverse.request(withSystem, llama, opts("converse"))), "messages[0].content[1].source.url");
    const merged = { model: "m", max_tokens: 100, messages: [{ role: "user", content: "first" }, { role: "user", content: [url] }] };
    names(refusal(() => messagesToConverse.request(merged, llama, opts("converse"))), "messages[1].content[0].source.url");
    const inResult = {
      model: "m", max_tokens: 100, system: "s", tools: [{ name: "f", input_schema: ok }],
      messages: [
        { role: "user", content: "go" },
        { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "f", input: {} }] },
        { role: "user", content: [{ type: "text", text: "here" }, { type: "tool_result", tool_use_id: "t1", content: [{ type: "text", text: "r" }, url] }] },
      ],
    };
    names(refusal(() => messagesToConverse.request(inResult, llama, opts("converse"))), "messages[2].content[1].content[1].source.url");
  });

  it("Gemini client, Anthropic upstream: an image type Anthropic refuses, candidateCount, a blank last turn", () => {
    const contents = [{ role: "user", parts: [{ text: "look" }, { inlineData: { mimeType: "image/bmp", data: "Qk0=" } }] }];
    names(refusal(() => geminiToMessages.request({ model: "m", systemInstruction: { parts: [{ text: "s" }] }, contents }, claude, opts("anthropic"))), "contents[0].parts[1].inlineData");
    names(refusal(() => geminiToMessages.request({ model: "m", contents: [{ role: "user", parts: [{ text: "x" }] }], generationConfig: { candidateCount: 2 } }, claude, opts("anthropic"))), "generationConfig.candidateCount");
    const blank = [{ role: "user", parts: [{ text: "hi" }] }, { role: "model", parts: [{ text: "ok" }] }, { role: "user", parts: [{ text: "  " }] }];
    names(refusal(() => geminiToMessages.request({ model: "m", contents: blank }, claude, opts("anthropic"))), "contents[2].parts");
  });

  it("Responses client, Bedrock upstream: tool call arguments that are not JSON are input[i].arguments", () => {
    const input = [{ role: "user", content: "go" }, { type: "function_call", call_id: "c1", name: "f", arguments: "{not json" }, { type: "function_call_output", call_id: "c1", output: "r" }];
    names(refusal(() => responsesToConverse.request({ model: "m", instructions: "s", input, tools: [{ type: "function", name: "f", parameters: ok }] }, llama, opts("converse"))), "input[1].arguments");
  });

  it("Messages client, Gemini upstream: a refused download (too many image URLs) names the image block", async () => {
    const images = Array.from({ length: MAX_URLS + 1 }, (_, i) => ({ type: "image", source: { type: "url", url: `https://x.test/${i}.png` } }));
    const t = messagesToGemini.request({ model: "m", max_tokens: 100, system: "s", messages: [{ role: "user", content: [{ type: "text", text: "look" }, ...images] }] }, gemini, opts("gemini"));
    const err = await t.download!({} as UrlFetchOptions, new AbortController().signal).then(() => undefined, (e) => e);
    names(err, `messages[0].content[${MAX_URLS + 1}].source.url`);
  });

  it("Messages client, Bedrock upstream: a refused download (too many image URLs) names the image's source.url", async () => {
    const images = Array.from({ length: MAX_URLS + 1 }, (_, i) => ({ type: "image", source: { type: "url", url: `https://x.test/${i}.png` } }));
    const t = messagesToConverse.request({ model: "m", max_tokens: 100, system: "s", messages: [{ role: "user", content: [{ type: "text", text: "look" }, ...images] }] }, llama, opts("converse"));
    const err = await t.download!({} as UrlFetchOptions, new AbortController().signal).then(() => undefined, (e) => e);
    names(err, `messages[0].content[${MAX_URLS + 1}].source.url`);
  });

  it("a chat client's refusal is unchanged", () => {
    const body = { model: "m", messages: [{ role: "system", content: "s" }, { role: "user", content: "x" }], tools: [{ type: "function", function: { name: "b", parameters: refChain() } }] };
    names(refusal(() => chatToGemini.request(body, gemini, opts("gemini"))), "tools[0].function.parameters");
  });
});
