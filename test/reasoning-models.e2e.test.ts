// OpenAI reasoning models behind the gateway's ids (issue 12, class 3): the shipped catalog marks o-series and
// GPT-5 endpoints, so a chat-completions passthrough and a translated Messages request alike reach the upstream
// with max_completion_tokens and without the sampling knobs those models refuse, which are named in
// x-mg-dropped-params. The fake upstream refuses like OpenAI does (400 unsupported_parameter).
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import YAML from "yaml";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { keyEntry, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { openAIShapeChecker } from "./helpers/openai-spec.ts";
import { unretiredEntries } from "./helpers/unretired-catalog.ts";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const KEY = testKey("reasoning-e2e");
let fake: FakeOpenAI;
let gw: TestGateway;

/** OpenAI's answer to a reasoning model given a parameter it does not take. */
function refuse(param: string, message: string) {
  return { error: { message, type: "invalid_request_error", param, code: "unsupported_parameter" } };
}

/** Every answer the openai client gets is also checked against OpenAI's own description (issue 26). */
const shapes = openAIShapeChecker();
afterEach(() => shapes.check());

beforeAll(async () => {
  fake = await startFakeOpenAI();
  fake.hook = (rec, res) => {
    const b = rec.body;
    if (!/^(o\d|gpt-5)/.test(b?.model ?? "") || /^gpt-5-chat/.test(b.model)) return false;
    const bad = b.max_tokens !== undefined
      ? refuse("max_tokens", "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.")
      : b.temperature !== undefined && b.temperature !== 1
        ? refuse("temperature", "Unsupported value: 'temperature' does not support 0.2 with this model. Only the default (1) value is supported.")
        : undefined;
    if (!bad) return false;
    res.writeHead(400, { "content-type": "application/json" });
    res.end(JSON.stringify(bad));
    return true;
  };
  // The shipped providers and catalog; only the openai provider points at the fake (the others stay disabled).
  const shipped = YAML.parse(readFileSync(join(root, "gateway.yaml"), "utf8"));
  gw = await startTestGateway({
    include: [join(root, "catalog", "models.yaml")],
    providers: { ...shipped.providers, openai: { ...shipped.providers.openai, base_url: fake.baseUrl } },
    // Entries an operator writes: no reasoning_model flag (the gateway tells from the upstream id), or the flag
    // overriding what the id says.
    models: {
      // The catalog's o-series and GPT-5 entries retire on OpenAI's shutdown days; the fake still serves them.
      ...unretiredEntries([join(root, "catalog", "models.yaml")]),
      "acme/thinker": { type: "language", endpoints: [{ provider: "openai", model: "o4-mini", pricing: { input: "0.000001", output: "0.000004" } }] },
      "acme/gpt5-chat": { type: "language", endpoints: [{ provider: "openai", model: "gpt-5-chat-latest", pricing: { input: "0.000001", output: "0.000004" } }] },
      "acme/classic": { type: "language", endpoints: [{ provider: "openai", model: "o4-mini", reasoning_model: false, pricing: { input: "0.000001", output: "0.000004" } }] },
    },
    projects: { p: { keys: [keyEntry("k", KEY)] } },
  }, { env: { OPENAI_API_KEY: "sk-fake-upstream" } });
});

afterAll(async () => {
  await gw?.close();
  await fake?.close();
});

describe("OpenAI reasoning models", () => {
  it("chat completions: max_tokens becomes max_completion_tokens, temperature is dropped and reported (JSON and stream)", async () => {
    const client = new OpenAI({ apiKey: KEY, baseURL: gw.baseURL, maxRetries: 0, fetch: shapes.fetch });
    const { data, response } = await client.chat.completions
      .create({ model: "openai/o4-mini", max_tokens: 40, temperature: 0.2, messages: [{ role: "user", content: "Hi" }] })
      .withResponse();
    expect(data.choices[0]!.message.content).toBeTruthy();
    expect(response.headers.get("x-mg-dropped-params")).toBe("temperature");
    const sent = fake.requests.at(-1)!.body;
    expect(sent).toMatchObject({ model: "o4-mini", max_completion_tokens: 40 });
    expect(sent.max_tokens).toBeUndefined();
    expect(sent.temperature).toBeUndefined();

    const stream = await client.chat.completions.create({ model: "openai/gpt-5", max_tokens: 40, stream: true, messages: [{ role: "user", content: "Hi" }] });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? "";
    expect(text).toContain("Hello");
    expect(fake.requests.at(-1)!.body).toMatchObject({ model: "gpt-5", max_completion_tokens: 40 });
  });

  it("a model that is not a reasoning model keeps max_tokens and temperature", async () => {
    const client = new OpenAI({ apiKey: KEY, baseURL: gw.baseURL, maxRetries: 0, fetch: shapes.fetch });
    await client.chat.completions.create({ model: "openai/gpt-4o-mini", max_tokens: 40, temperature: 0.2, messages: [{ role: "user", content: "Hi" }] });
    expect(fake.requests.at(-1)!.body).toMatchObject({ model: "gpt-4o-mini", max_tokens: 40, temperature: 0.2 });
  });

  it("a Messages request translated to a reasoning model is fitted the same way", async () => {
    const client = new Anthropic({ apiKey: KEY, baseURL: gw.url + "/api", maxRetries: 0 });
    const { data, response } = await client.messages
      .create({ model: "openai/o3", max_tokens: 64, temperature: 0.2, messages: [{ role: "user", content: "Hi" }] } as never)
      .withResponse();
    expect(data.content[0]).toMatchObject({ type: "text" });
    expect(response.headers.get("x-mg-dropped-params")).toContain("temperature");
    const sent = fake.requests.at(-1)!.body;
    expect(sent).toMatchObject({ model: "o3", max_completion_tokens: 64 });
    expect(sent.max_tokens).toBeUndefined();
  });

  it("an operator's own entry without reasoning_model is recognised from its upstream id (o4-mini); gpt-5-chat-latest is not; reasoning_model: false opts out", async () => {
    const client = new OpenAI({ apiKey: KEY, baseURL: gw.baseURL, maxRetries: 0, fetch: shapes.fetch });
    const res = await client.chat.completions.create({ model: "acme/thinker", max_tokens: 40, messages: [{ role: "user", content: "Hi" }] });
    expect(res.choices[0]!.message.content).toBeTruthy();
    expect(fake.requests.at(-1)!.body).toMatchObject({ model: "o4-mini", max_completion_tokens: 40 });
    expect(fake.requests.at(-1)!.body.max_tokens).toBeUndefined();

    await client.chat.completions.create({ model: "acme/gpt5-chat", max_tokens: 40, temperature: 0.2, messages: [{ role: "user", content: "Hi" }] });
    expect(fake.requests.at(-1)!.body).toMatchObject({ model: "gpt-5-chat-latest", max_tokens: 40, temperature: 0.2 });

    // reasoning_model: false overrides the recognition: max_tokens goes as sent, the upstream's refusal is a 400.
    const err = await client.chat.completions.create({ model: "acme/classic", max_tokens: 40, messages: [{ role: "user", content: "Hi" }] }).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(fake.requests.at(-1)!.body).toMatchObject({ model: "o4-mini", max_tokens: 40 });
  });
});
