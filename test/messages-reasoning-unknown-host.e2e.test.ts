// A Messages client (Claude Code, @anthropic-ai/sdk) and a Gemini client (Gemini CLI, @google/genai) in a thinking tool
// loop on a reasoning model of an OpenAI-compatible host the gateway does not know (a base_url with no
// reasoning_field) that refuses fields outside its API, as strict hosts do ("Extra inputs are not permitted":
// Databricks, OpenCode Zen). Turn 1 thinks and calls; turn 2 sends the thinking block (Messages) or the thought
// signature (Gemini) back with the result. Such a host gets no reasoning field on the assistant message, one its
// client never sent, and answers; with `reasoning_field: none` nothing goes back either, and nothing is named dropped.
// (A host whose convention takes the text back gets it: messages-thinking / gemini-reasoning-hosts e2e.)
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import Anthropic from "@anthropic-ai/sdk";
import type { FakeOpenAI } from "./upstreams/openai.ts";
import { reasoningFor } from "./upstreams/openai-reasoning.ts";
import { testKey, type TestGateway } from "./helpers/gateway.ts";
import { STRICT_HOSTS, sentReasoningFields, startStrictHostGateway } from "./helpers/strict-host-gateway.ts";

/** Not a devDependency yet: imported by a name the type-checker does not resolve, so the suite builds without it. */
const GENAI = "@google/genai";
const genai: any = await import(GENAI).catch(() => undefined);
const KEY = testKey("messages-reason-unknown");
let up: FakeOpenAI;
let gw: TestGateway;

beforeAll(async () => {
  ({ up, gw } = await startStrictHostGateway(KEY));
});

afterAll(async () => {
  await gw?.close();
  await up?.close();
});

describe.each(STRICT_HOSTS)("a Messages client's thinking tool loop on a strict host with %s", (_label, model) => {
  const tools: Anthropic.Tool[] = [{ name: "get_weather", description: "Weather for a city", input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } }];

  it("turn 2 sends the thinking block back: the host gets no reasoning field and answers, nothing named dropped", async () => {
    const client = new Anthropic({ apiKey: KEY, baseURL: `${gw.url}/api`, maxRetries: 0 });
    const p = { model, max_tokens: 8000, thinking: { type: "enabled", budget_tokens: 2000 }, tools, messages: [{ role: "user", content: "Weather in Paris?" }] } as const;
    const first = await client.messages.create({ ...p, messages: [...p.messages] });
    expect(first.content.map((b) => b.type)).toEqual(["thinking", "tool_use"]);
    expect((first.content[0] as Anthropic.ThinkingBlock).thinking).toBe(reasoningFor("medium"));
    const use = first.content.find((b): b is Anthropic.ToolUseBlock => b.type === "tool_use")!;
    const messages: Anthropic.MessageParam[] = [...p.messages, { role: "assistant", content: first.content }, { role: "user", content: [{ type: "tool_result", tool_use_id: use.id, content: "21C and sunny" }] }];
    const { data: second, response } = await client.messages.create({ ...p, messages }).withResponse();
    expect(second.content.map((b) => b.type)).toEqual(["thinking", "text"]);
    expect(sentReasoningFields(up)).toEqual([]);
    expect(response.headers.get("x-mg-dropped-params")).toBeNull();
  });
});

describe.skipIf(!genai).each(STRICT_HOSTS)("a Gemini client's thinking tool loop on a strict host with %s", (_label, model) => {
  it("turn 2 sends the thought signature back: the host gets no reasoning field and answers", async () => {
    const ai = new genai.GoogleGenAI({ apiKey: KEY, httpOptions: { baseUrl: `${gw.url}/api`, retryOptions: { attempts: 1 } } });
    const config = {
      tools: [{ functionDeclarations: [{ name: "get_weather", parametersJsonSchema: { type: "object", properties: { city: { type: "string" } } } }] }],
      thinkingConfig: { includeThoughts: true },
    };
    const contents = [{ role: "user", parts: [{ text: "Weather in Paris?" }] }];
    // Kept as Gemini CLI keeps them: thought parts dropped, the signature on the call.
    const parts = (await ai.models.generateContent({ model, contents, config })).candidates[0].content.parts.filter((p: any) => p.thought !== true);
    const call = parts.find((p: any) => p.functionCall);
    expect(call.thoughtSignature).toMatch(/^mgr1\./);
    const answer = [{ functionResponse: { id: call.functionCall.id, name: call.functionCall.name, response: { output: "21C and sunny" } } }];
    const second = await ai.models.generateContent({ model, contents: [...contents, { role: "model", parts }, { role: "user", parts: answer }], config });
    expect(second.text).toBe("Hello from the fake upstream, streaming word by word.");
    expect(sentReasoningFields(up)).toEqual([]);
    expect(second.sdkHttpResponse?.headers?.["x-mg-dropped-params"]).toBeUndefined();
  });
});
