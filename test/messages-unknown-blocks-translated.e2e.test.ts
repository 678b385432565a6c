// A Messages conversation made only of content blocks the gateway does not know (the SDK's beta compaction, a
// fallback block), sent to a model that is not Claude: the blocks are left out, nothing of the conversation is left,
// and the client gets the gateway's own 400 naming messages instead of the upstream's refusal of an empty request,
// without the upstream being called. On the shipped shape, through a chat model and a Gemini one.
import { afterAll, beforeAll, expect, it } from "vitest";
import { providerEnv, shippedConfig, SHIPPED_KEY } from "./helpers/shipped-config.ts";
import { postJson, startTestGateway, type TestGateway } from "./helpers/gateway.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";
import { FAKE_GEMINI_KEY, startFakeGemini, type FakeGemini } from "./upstreams/gemini.ts";

let openai: FakeOpenAI;
let anthropic: FakeAnthropic;
let gemini: FakeGemini;
let gw: TestGateway;

beforeAll(async () => {
  [openai, anthropic, gemini] = await Promise.all([startFakeOpenAI(), startFakeAnthropic(), startFakeGemini()]);
  const config = shippedConfig({ openai: openai.baseUrl, anthropic: anthropic.baseUrl });
  config.providers.gemini.base_url = gemini.baseUrl;
  gw = await startTestGateway(config, { env: { ...providerEnv(config), GEMINI_API_KEY: FAKE_GEMINI_KEY } });
});
afterAll(async () => {
  await gw?.close();
  await Promise.all([openai?.close(), anthropic?.close(), gemini?.close()]);
});

const post = (body: unknown) => postJson(`${gw.url}/api/v1/messages`, body, { "x-api-key": SHIPPED_KEY, "anthropic-version": "2023-06-01" });
const upstreamCalls = () => openai.requests.length + anthropic.requests.length + gemini.requests.length;

it.each(["openai/gpt-4o-mini", "google/gemini-2.5-flash"])("%s: turns made only of unknown blocks are the gateway's 400 naming messages, nothing sent", async (model) => {
  const before = upstreamCalls();
  const r = await post({
    model,
    max_tokens: 50,
    system: "Be brief",
    messages: [
      { role: "user", content: [{ type: "fallback", model: "x" }] },
      { role: "assistant", content: [{ type: "compaction", content: "an earlier summary" }] },
      { role: "user", content: [{ type: "made_up", text: "go on" }] },
    ],
  });
  expect(r.status, r.text).toBe(400);
  expect(r.json.error.code, r.text).toBe("INVALID_REQUEST");
  expect(r.json.error.details.field).toBe("messages");
  expect(r.json.error.message).toContain("messages[0].content[0], messages[1].content[0], messages[2].content[0]");
  expect(upstreamCalls()).toBe(before);
});

it("counting such a conversation's tokens on a chat model is the same 400, not a count of nothing", async () => {
  const r = await postJson(`${gw.url}/api/v1/messages/count_tokens`, { model: "openai/gpt-4o-mini", messages: [{ role: "user", content: [{ type: "made_up", text: "go on" }] }] }, { "x-api-key": SHIPPED_KEY, "anthropic-version": "2023-06-01" });
  expect(r.status, r.text).toBe(400);
  expect(r.json.error.details.field, r.text).toBe("messages");
});

it("a turn with text beside them still reaches the model, the blocks named as left out", async () => {
  const r = await post({ model: "openai/gpt-4o-mini", max_tokens: 50, messages: [{ role: "user", content: [{ type: "made_up", text: "x" }, { type: "text", text: "hi" }] }] });
  expect(r.status, r.text).toBe(200);
  expect(r.headers.get("x-mg-dropped-params")).toContain("messages[0].content[0]");
  expect((openai.requests.at(-1)!.body as any).messages).toEqual([{ role: "user", content: "hi" }]);
});

// The latest user turn made only of such blocks, after an assistant turn: sent without it, the conversation would end
// with that assistant turn, which the model continues as a prefill (or it answers the earlier turn) - a 200 that
// answers a question the client did not ask. Refused instead, nothing sent.
const earlier = [{ role: "user", content: "hi" }, { role: "assistant", content: "Hello! The capital is" }];

it.each(["openai/gpt-4o-mini", "google/gemini-2.5-flash"])("%s: a last user turn made only of unknown blocks is the gateway's 400 naming messages, not a prefill sent on", async (model) => {
  const before = upstreamCalls();
  const r = await post({ model, max_tokens: 50, messages: [...earlier, { role: "user", content: [{ type: "mystery", note: "What is the capital of France?" }] }] });
  expect(r.status, r.text).toBe(400);
  expect(r.json.error.code, r.text).toBe("INVALID_REQUEST");
  expect(r.json.error.details.field).toBe("messages");
  expect(r.json.error.message).toContain("the last user message's content blocks were left out (messages[2].content[0])");
  expect(upstreamCalls()).toBe(before);
});

// The same turn followed by the client's own prefill: sent on, the model would continue "The answer is" as the answer
// to the earlier question (Gemini: both model turns merged into one), the client's question gone. Refused the same.
it.each(["openai/gpt-4o-mini", "google/gemini-2.5-flash"])("%s: a last user turn made only of unknown blocks, then the client's prefill, is the same 400, nothing sent", async (model) => {
  const before = upstreamCalls();
  const r = await post({
    model,
    max_tokens: 50,
    messages: [
      { role: "user", content: "What is 2+2?" },
      { role: "assistant", content: "4" },
      { role: "user", content: [{ type: "made_up", text: "What is the capital of France?" }] },
      { role: "assistant", content: "The answer is" },
    ],
  });
  expect(r.status, r.text).toBe(400);
  expect(r.json.error.code, r.text).toBe("INVALID_REQUEST");
  expect(r.json.error.details.field).toBe("messages");
  expect(r.json.error.message).toContain("the last user message's content blocks were left out (messages[2].content[0])");
  expect(upstreamCalls()).toBe(before);
});

it("a prefill the client sent itself still reaches the model, ending the conversation as sent", async () => {
  const r = await post({ model: "google/gemini-2.5-flash", max_tokens: 50, messages: earlier });
  expect(r.status, r.text).toBe(200);
  const contents = (gemini.requests.at(-1)!.body as any).contents;
  expect(contents.at(-1).role).toBe("model");
  expect(contents.at(-1).parts).toEqual([{ text: "Hello! The capital is" }]);
});

// Consecutive user turns are merged into one chat message: the block is still named in the client's own message, not
// at its place in the merged one (messages[2].content[1], a field the client never sent).
it("a block in the second of two user turns in a row is named as the client sent it", async () => {
  const r = await post({
    model: "openai/gpt-4o-mini",
    max_tokens: 50,
    messages: [...earlier, { role: "user", content: [{ type: "text", text: "one" }] }, { role: "user", content: [{ type: "made_up" }, { type: "text", text: "two" }] }],
  });
  expect(r.status, r.text).toBe(200);
  expect(r.headers.get("x-mg-dropped-params")).toBe("messages[3].content[0]");
});
