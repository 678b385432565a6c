// A web search answer's sources reach an OpenAI client in its own shape, through the gateway as it ships
// (gateway.yaml, default catalog) on a Claude model: Claude answers the search with a text block whose citations are
// web_search_result_location; the chat client reads them as message.annotations (url_citation), the Responses client
// as output_text annotations after a web_search_call item, JSON and stream alike. Read with the official openai SDK.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import OpenAI from "openai";
import { startTestGateway, type TestGateway } from "./helpers/gateway.ts";
import { SHIPPED_KEY, providerEnv, shippedConfig } from "./helpers/shipped-config.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { SEARCHED, startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";

const CLAUDE = "anthropic/claude-sonnet-4.5";
/** The fake's cited source (the first search result) over its whole answer text. */
const SOURCE = { url: "https://example.com/0", title: "Result 0", start_index: 0, end_index: SEARCHED.length };
const question = "What is the latest gateway news?";

let openai: FakeOpenAI;
let anthropic: FakeAnthropic;
let gw: TestGateway;
let oai: OpenAI;

beforeAll(async () => {
  [openai, anthropic] = await Promise.all([startFakeOpenAI(), startFakeAnthropic()]);
  const config = shippedConfig({ openai: openai.baseUrl, anthropic: anthropic.baseUrl });
  gw = await startTestGateway(config, { env: providerEnv(config) });
  oai = new OpenAI({ apiKey: SHIPPED_KEY, baseURL: gw.baseURL, maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([openai?.close(), anthropic?.close()]);
});

describe("chat completions with web_search_options on Claude", () => {
  const body = { model: CLAUDE, messages: [{ role: "user" as const, content: question }], web_search_options: {} };

  it("JSON: the cited source is a url_citation annotation over the text it supports", async () => {
    const c = await oai.chat.completions.create(body);
    expect(anthropic.requests.at(-1)!.body.tools).toEqual([expect.objectContaining({ type: "web_search_20250305" })]);
    const msg = c.choices[0]!.message;
    expect(msg.content).toBe(SEARCHED);
    const { url, title, start_index, end_index } = SOURCE;
    expect(msg.annotations).toEqual([{ type: "url_citation", url_citation: { url, title, start_index, end_index } }]);
  });

  it("stream: the SDK's final message carries the same annotations", async () => {
    const stream = oai.chat.completions.stream(body);
    const final = await stream.finalChatCompletion();
    const msg = final.choices[0]!.message;
    expect(msg.content).toBe(SEARCHED);
    const { url, title, start_index, end_index } = SOURCE;
    expect(msg.annotations).toEqual([{ type: "url_citation", url_citation: { url, title, start_index, end_index } }]);
  });
});

describe("Responses with a web_search tool on Claude", () => {
  const body = { model: CLAUDE, input: question, tools: [{ type: "web_search" as const }] };
  const annotation = { type: "url_citation", ...SOURCE };

  it("JSON: a web_search_call item, then the message whose output_text carries the source", async () => {
    const r = await oai.responses.create(body);
    expect(r.output.map((o) => o.type)).toEqual(["web_search_call", "message"]);
    expect(r.output[0]).toMatchObject({ type: "web_search_call", status: "completed" });
    const text = (r.output[1] as any).content[0];
    expect(text).toMatchObject({ type: "output_text", text: SEARCHED });
    expect(text.annotations).toEqual([annotation]);
  });

  it("stream: response.output_text.annotation.added, and the final response carries the source", async () => {
    const stream = oai.responses.stream(body);
    const added: any[] = [];
    stream.on("response.output_text.annotation.added", (e) => added.push(e.annotation));
    const final = await stream.finalResponse();
    expect(added).toEqual([annotation]);
    const message = final.output.find((o) => o.type === "message") as any;
    expect(message.content[0].annotations).toEqual([annotation]);
    expect(final.output.some((o) => o.type === "web_search_call" && o.status === "completed")).toBe(true);
  });
});
