// A reasoning effort sent to a model that cannot reason, on the shipped gateway (gateway.yaml: SQLite store, full
// default pipeline, default catalog, a live key with budget and rate limits) with the official openai client. Codex
// sends reasoning {effort, summary} and include reasoning.encrypted_content, Qwen Code OpenRouter's reasoning object
// (reasoning_effort once folded), whatever the model; OpenAI answers 400 "Unsupported parameter: 'reasoning.effort'
// is not supported with this model." for GPT-4.1 (the fakes refuse it so). The catalog's GPT-4.1 lists tags without
// `reasoning`: the knobs are left out and named in x-mg-dropped-params, on chat and Responses (native passthrough).
// An entry of the operator's own without tags is not known: it gets what was sent, and the upstream's 400.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import OpenAI from "openai";
import { startTestGateway, type TestGateway } from "./helpers/gateway.ts";
import { SHIPPED_KEY, providerEnv, shippedConfig } from "./helpers/shipped-config.ts";
import { startFakeOpenAIResponses, type FakeOpenAIWithResponses } from "./upstreams/openai-responses.ts";
import { startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";

const GPT41 = "openai/gpt-4.1";
/** An operator's own entry on the same upstream id, without tags: the gateway knows nothing of its reasoning. */
const OWN = "own/gpt-4.1";

let up: FakeOpenAIWithResponses;
let claude: FakeAnthropic;
let gw: TestGateway;
let client: OpenAI;

beforeAll(async () => {
  [up, claude] = await Promise.all([startFakeOpenAIResponses(), startFakeAnthropic()]);
  const config = shippedConfig({ openai: up.baseUrl, anthropic: claude.baseUrl });
  config.models = { ...config.models, [OWN]: { endpoints: [{ provider: "openai", model: "gpt-4.1", native_responses: true }] } };
  gw = await startTestGateway(config, { env: providerEnv(config) });
  client = new OpenAI({ apiKey: SHIPPED_KEY, baseURL: gw.baseURL, maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([up?.close(), claude?.close()]);
});

const lastUpstream = (path: string) => up.requests.filter((r) => r.path === path).at(-1)!.body;

describe("a reasoning effort for GPT-4.1 (catalog tags without `reasoning`)", () => {
  it("chat: reasoning_effort is not sent; the answer comes, naming it", async () => {
    const { data, response } = await client.chat.completions
      .create({ model: GPT41, messages: [{ role: "user", content: "hi" }], reasoning_effort: "medium" })
      .withResponse();
    expect(data.choices[0]!.message.content).toBeTruthy();
    expect(response.headers.get("x-mg-dropped-params")).toBe("reasoning_effort");
    expect(lastUpstream("/v1/chat/completions")).not.toHaveProperty("reasoning_effort");
  });

  it("chat: Qwen Code's reasoning object (folded into reasoning_effort) likewise, streamed", async () => {
    const body = { model: GPT41, messages: [{ role: "user", content: "hi" }], stream: true, reasoning: { effort: "medium" } };
    const { data, response } = await client.chat.completions.create(body as any).withResponse();
    let text = "";
    for await (const c of data as unknown as AsyncIterable<any>) text += c.choices[0]?.delta?.content ?? "";
    expect(text).toBeTruthy();
    expect(response.headers.get("x-mg-dropped-params")).toBe("reasoning_effort");
    const sent = lastUpstream("/v1/chat/completions");
    expect(sent).not.toHaveProperty("reasoning_effort");
    expect(sent).not.toHaveProperty("reasoning");
  });

  it("Responses (native passthrough), as Codex sends it: reasoning and include's encrypted reasoning go, named", async () => {
    const body = {
      model: GPT41, input: "hi", store: false, reasoning: { effort: "medium" as const, summary: "auto" as const },
      include: ["reasoning.encrypted_content" as const],
    };
    const { data: json, response: r1 } = await client.responses.create(body).withResponse();
    expect(json.output_text).toBeTruthy();
    expect(r1.headers.get("x-mg-dropped-params")).toBe("reasoning.effort,reasoning.summary,include.reasoning.encrypted_content");
    const sent = lastUpstream("/v1/responses");
    expect(sent).not.toHaveProperty("reasoning");
    expect(sent).not.toHaveProperty("include");

    const { data: stream, response: r2 } = await client.responses.create({ ...body, stream: true }).withResponse();
    const types: string[] = [];
    for await (const e of stream) types.push(e.type);
    expect(types.at(-1)).toBe("response.completed");
    expect(r2.headers.get("x-mg-dropped-params")).toBe("reasoning.effort,reasoning.summary,include.reasoning.encrypted_content");
  });
});

describe("where the gateway does not refuse the effort", () => {
  it("a reasoning model of the catalog (GPT-5 mini) gets it as sent", async () => {
    const { response } = await client.responses.create({ model: "openai/gpt-5-mini", input: "hi", reasoning: { effort: "low" } }).withResponse();
    expect(response.headers.get("x-mg-dropped-params")).toBeNull();
    expect(lastUpstream("/v1/responses").reasoning).toEqual({ effort: "low" });
  });

  it("an entry of the operator's own without tags gets it as sent, and OpenAI's 400 for gpt-4.1", async () => {
    const chat = await client.chat.completions.create({ model: OWN, messages: [{ role: "user", content: "hi" }], reasoning_effort: "medium" }).catch((e) => e);
    expect(chat).toBeInstanceOf(OpenAI.BadRequestError);
    expect(chat.message).toContain("Unsupported parameter: 'reasoning_effort' is not supported with this model.");
    const rsp = await client.responses.create({ model: OWN, input: "hi", reasoning: { effort: "medium" } }).catch((e) => e);
    expect(rsp).toBeInstanceOf(OpenAI.BadRequestError);
    expect(rsp.message).toContain("Unsupported parameter: 'reasoning.effort' is not supported with this model.");
  });
});
