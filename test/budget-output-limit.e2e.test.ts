// Security issue 25, item 3: what the budget and the rate limits reserve is exactly the output the upstream is
// asked for — every alias of the output limit (max_tokens, max_completion_tokens, max_output_tokens), thinking
// budgets (thinking.budget_tokens, providerOptions.<provider>.thinkingBudget in dollars, reasoning efforts) and
// choices (n), on every client protocol (chat, messages, responses) crossed with every upstream protocol (OpenAI
// chat and Responses, Anthropic, Gemini, Bedrock Converse and InvokeModel, Vertex Gemini and Claude). A gateway with
// a SQLite store and the full default pipeline; each request is sent once with a key whose budget is too small (the
// 402 says what it would reserve) and once with a rich key (the fake upstream records what it was asked for). The
// `-thinking` routes are models that can think (catalog tag `reasoning`), where a translated request's thinking
// (Messages' `thinking`, Gemini's thinkingConfig) reaches the upstream as its own knob.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { readFileSync } from "node:fs";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { startFakeOpenAIResponses, type FakeOpenAIWithResponses } from "./upstreams/openai-responses.ts";
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";
import { FAKE_GEMINI_KEY, startFakeGemini, type FakeGemini } from "./upstreams/gemini.ts";
import { FAKE_AWS, startFakeBedrock, type FakeBedrock } from "./upstreams/bedrock.ts";
import { makeServiceAccount, startFakeTokenEndpoint, type FakeTokenEndpoint } from "./upstreams/vertex-auth.ts";
import { startFakeVertex, type FakeVertex } from "./upstreams/vertex.ts";
import { picoToUsd } from "../core/money/money.ts";

const RICH = testKey("budget-rich");
const POOR = testKey("budget-poor");
const CAPPED = testKey("budget-5ct");
const TPM = testKey("budget-tpm");
/** USD per output token; input is free, so a reservation is exactly output tokens x this. */
const OUT_PRICE = "0.000015";
const OUT_PICO = 15_000_000n;
const price = { input: "0", output: OUT_PRICE };
/** Every model's catalog maximum: what a request that leaves the limit to the model reserves. */
const MODEL_MAX = 32_000;
/** $0.30 of thinking at $15 per million output tokens: 20 000 tokens. */
const DOLLARS = 0.3;

type Wire = "chat" | "responses" | "messages" | "converse" | "gemini";
interface Route { model: string; provider: string; seen(client: string): { wire: Wire; body: any } | undefined }

let openai: FakeOpenAIWithResponses;
let anthropic: FakeAnthropic;
let gemini: FakeGemini;
let bedrock: FakeBedrock;
let tokens: FakeTokenEndpoint;
let vertex: FakeVertex;
let gw: TestGateway;
let routes: Route[];

const last = <T extends { path: string }>(list: T[], re: RegExp) => [...list].reverse().find((r) => re.test(r.path));
const as = (wire: Wire, r: { body: any } | undefined) => (r ? { wire, body: r.body } : undefined);

beforeAll(async () => {
  openai = await startFakeOpenAIResponses();
  anthropic = await startFakeAnthropic();
  gemini = await startFakeGemini();
  bedrock = await startFakeBedrock();
  tokens = await startFakeTokenEndpoint();
  const sa = makeServiceAccount(tokens.tokenUri, { projectId: "fake-project" });
  tokens.trust(sa);
  vertex = await startFakeVertex(tokens, { project: "fake-project", location: "us-east5" });
  const sigv4 = { protocol: "bedrock", region: FAKE_AWS.region, aws_access_key_id: FAKE_AWS.accessKeyId, aws_secret_access_key: FAKE_AWS.secretAccessKey, base_url: bedrock.baseUrl };
  const model = (provider: string, upstream: string, extra: Record<string, unknown> = {}) =>
    ({ type: "language", context_window: 200_000, max_tokens: MODEL_MAX, endpoints: [{ provider, model: upstream, pricing: price, ...extra }] });
  const thinker = (provider: string, upstream: string) => ({ ...model(provider, upstream), tags: ["reasoning"] });
  const limits = { rpm: 100_000, tpm: 50_000_000 };
  gw = await startTestGateway({
    store: { kind: "sqlite", path: "./gateway.db" },
    providers: {
      openai: { protocol: "openai", base_url: openai.baseUrl, api_key: "sk-fake-upstream" },
      anthropic: { protocol: "anthropic", base_url: anthropic.baseUrl, api_key: FAKE_ANTHROPIC_KEY },
      gemini: { protocol: "gemini", base_url: gemini.baseUrl, api_key: FAKE_GEMINI_KEY },
      aws: sigv4,
      "aws-converse": { ...sigv4, bedrock_claude_api: "converse" },
      vertex: { protocol: "vertex", base_url: vertex.baseUrl, region: "us-east5", credentials_file: "sa.json" },
    },
    models: {
      "t/chat": model("openai", "gpt-4o"),
      "t/responses": model("openai", "gpt-5", { native_responses: true }),
      "t/anthropic": model("anthropic", "claude-sonnet-4-5"),
      "t/gemini": model("gemini", "gemini-2.5-flash"),
      "t/converse": model("aws", "us.meta.llama3-3-70b-instruct-v1:0"),
      "t/converse-claude": model("aws-converse", "us.anthropic.claude-sonnet-4-5-20250929-v1:0"),
      "t/invoke-claude": model("aws", "us.anthropic.claude-sonnet-4-5-20250929-v1:0"),
      "t/vertex-gemini": model("vertex", "gemini-2.5-flash"),
      "t/vertex-claude": model("vertex", "claude-sonnet-4-5@20250929"),
      "t/chat-thinking": thinker("openai", "o4-mini"),
      "t/gemini-thinking": thinker("gemini", "gemini-2.5-flash"),
      "t/converse-claude-thinking": thinker("aws-converse", "us.anthropic.claude-sonnet-4-5-20250929-v1:0"),
      "t/vertex-gemini-thinking": thinker("vertex", "gemini-2.5-flash"),
    },
    projects: {
      rich: { keys: [keyEntry("rich", RICH)], budget: { usd: "1000000", period: "month" }, rate_limits: limits },
      poor: { keys: [keyEntry("poor", POOR)], budget: { usd: "0.000000001", period: "month" }, rate_limits: limits },
      capped: { keys: [keyEntry("capped", CAPPED)], budget: { usd: "0.05", period: "month" }, rate_limits: limits },
      tpm: { keys: [keyEntry("tpm", TPM)], rate_limits: { rpm: 100_000, tpm: 10_000 } },
    },
  }, { files: { "sa.json": readFileSync(sa.file, "utf8") } });
  const chatOrResponses = (client: string) => client === "responses" ? as("responses", last(openai.requests, /\/responses$/)) : as("chat", last(openai.requests, /\/chat\/completions$/));
  routes = [
    { model: "t/chat", provider: "openai", seen: () => as("chat", last(openai.requests, /\/chat\/completions$/)) },
    { model: "t/responses", provider: "openai", seen: chatOrResponses },
    { model: "t/anthropic", provider: "anthropic", seen: () => as("messages", last(anthropic.requests, /\/v1\/messages$/)) },
    { model: "t/gemini", provider: "gemini", seen: () => as("gemini", last(gemini.requests, /:(stream)?generateContent/i)) },
    { model: "t/converse", provider: "aws", seen: () => as("converse", last(bedrock.requests, /\/converse$/)) },
    { model: "t/converse-claude", provider: "aws-converse", seen: () => as("converse", last(bedrock.requests, /\/converse$/)) },
    { model: "t/invoke-claude", provider: "aws", seen: () => as("messages", last(bedrock.requests, /\/invoke$/)) },
    { model: "t/vertex-gemini", provider: "vertex", seen: () => as("gemini", last(vertex.requests, /:generateContent$/)) },
    { model: "t/vertex-claude", provider: "vertex", seen: () => as("messages", last(vertex.requests, /:rawPredict$/)) },
    { model: "t/chat-thinking", provider: "openai", seen: () => as("chat", last(openai.requests, /\/chat\/completions$/)) },
    { model: "t/gemini-thinking", provider: "gemini", seen: () => as("gemini", last(gemini.requests, /:(stream)?generateContent/i)) },
    { model: "t/converse-claude-thinking", provider: "aws-converse", seen: () => as("converse", last(bedrock.requests, /\/converse$/)) },
    { model: "t/vertex-gemini-thinking", provider: "vertex", seen: () => as("gemini", last(vertex.requests, /:generateContent$/)) },
  ];
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([openai?.close(), anthropic?.close(), gemini?.close(), bedrock?.close(), vertex?.close(), tokens?.close()]);
});

const num = (v: unknown) => (typeof v === "number" ? v : undefined);

/** The largest of the limits a passed-through OpenAI-protocol body carries: whichever one the host honours. */
function openaiLimit(body: any): number {
  const asked = [num(body.max_tokens), num(body.max_completion_tokens), num(body.max_output_tokens)].filter((n): n is number => n !== undefined);
  return asked.length ? Math.max(...asked) : MODEL_MAX;
}

/** The most output tokens an upstream can bill for the request it received, read from its own wire format. */
function billableOutput({ wire, body }: { wire: Wire; body: any }): number {
  switch (wire) {
    case "chat":
      return openaiLimit(body) * (body.n ?? 1);
    case "responses":
      return openaiLimit(body);
    case "messages":
      return body.max_tokens;
    case "converse":
      return body.inferenceConfig?.maxTokens ?? MODEL_MAX;
    case "gemini": {
      const g = body.generationConfig ?? {};
      // The thinking budget is billed as output and documented as apart from maxOutputTokens.
      const per = g.maxOutputTokens === undefined ? MODEL_MAX : g.maxOutputTokens + (g.thinkingConfig?.thinkingBudget ?? 0);
      return per * (g.candidateCount ?? 1);
    }
  }
}

const PROVIDERS = ["openai", "anthropic", "gemini", "aws", "aws-converse", "vertex"];
/** The same provider knobs for every provider namespace, so each target finds its own. */
const knobs = (k: Record<string, unknown>) => ({ providerOptions: Object.fromEntries(PROVIDERS.map((p) => [p, k])) });
const hi = [{ role: "user", content: "Hi" }];

const say = (text: string) => [{ role: "user", parts: [{ text }] }];
const CASES: { client: keyof typeof PATHS; name: string; body: Record<string, unknown> }[] = [
  { client: "chat", name: "max_tokens 1, max_completion_tokens 60000", body: { messages: hi, max_tokens: 1, max_completion_tokens: 60000 } },
  { client: "chat", name: "max_completion_tokens 1, max_tokens 60000", body: { messages: hi, max_completion_tokens: 1, max_tokens: 60000 } },
  { client: "chat", name: "max_tokens 1, max_output_tokens 60000", body: { messages: hi, max_tokens: 1, max_output_tokens: 60000 } },
  { client: "chat", name: "no limit", body: { messages: hi } },
  { client: "chat", name: "n 3", body: { messages: hi, max_tokens: 100, n: 3 } },
  { client: "chat", name: "reasoning_effort high", body: { messages: hi, max_tokens: 1, reasoning_effort: "high" } },
  { client: "chat", name: "thinkingBudget in dollars", body: { messages: hi, max_tokens: 1, ...knobs({ thinkingBudget: DOLLARS }) } },
  { client: "chat", name: "reasoningEffort knob", body: { messages: hi, max_tokens: 1, ...knobs({ reasoningEffort: "high" }) } },
  { client: "messages", name: "max_tokens 1, max_completion_tokens 60000", body: { messages: hi, max_tokens: 1, max_completion_tokens: 60000 } },
  { client: "messages", name: "thinking.budget_tokens", body: { messages: hi, max_tokens: 5000, thinking: { type: "enabled", budget_tokens: 2000 } } },
  { client: "messages", name: "thinking.budget_tokens 20000, max_tokens 1000", body: { messages: hi, max_tokens: 1000, thinking: { type: "enabled", budget_tokens: 20000 } } },
  // Claude Code on a model it does not know: adaptive thinking at the effort it chose.
  { client: "messages", name: "thinking adaptive, output_config.effort high", body: { messages: hi, max_tokens: 1, thinking: { type: "adaptive" }, output_config: { effort: "high" } } },
  { client: "messages", name: "thinkingBudget in dollars", body: { messages: hi, max_tokens: 1, ...knobs({ thinkingBudget: DOLLARS }) } },
  { client: "messages", name: "reasoningEffort knob", body: { messages: hi, max_tokens: 1, ...knobs({ reasoningEffort: "high" }) } },
  { client: "responses", name: "max_output_tokens 1, max_tokens 60000", body: { input: "Hi", max_output_tokens: 1, max_tokens: 60000 } },
  { client: "responses", name: "no limit", body: { input: "Hi" } },
  { client: "responses", name: "reasoning.effort high", body: { input: "Hi", max_output_tokens: 1, reasoning: { effort: "high" } } },
  { client: "responses", name: "thinkingBudget in dollars", body: { input: "Hi", max_output_tokens: 1, ...knobs({ thinkingBudget: DOLLARS }) } },
  // The Gemini API: the limit, the choices and the thinking budget live in generationConfig.
  { client: "gemini", name: "no limit", body: { contents: say("Hi") } },
  { client: "gemini", name: "maxOutputTokens 100, candidateCount 3", body: { contents: say("Hi"), generationConfig: { maxOutputTokens: 100, candidateCount: 3 } } },
  { client: "gemini", name: "maxOutputTokens 1, thinkingBudget 20000", body: { contents: say("Hi"), generationConfig: { maxOutputTokens: 1, thinkingConfig: { thinkingBudget: 20000 } } } },
];

const PATHS = { chat: "/chat/completions", messages: "/messages", responses: "/responses", gemini: ":generateContent" };
/** Sent on its client protocol; the Gemini API names the model in the URL. */
function send(client: keyof typeof PATHS, { model, ...body }: Record<string, any>, key: string) {
  const url = client === "gemini" ? `${gw.baseURL}beta/models/${model}${PATHS.gemini}` : `${gw.baseURL}${PATHS[client]}`;
  return postJson(url, client === "gemini" ? body : { model, ...body }, { authorization: `Bearer ${key}`, "anthropic-version": "2023-06-01" });
}
const clear = () => {
  for (const list of [openai.requests, anthropic.requests, gemini.requests, bedrock.requests, vertex.requests]) list.length = 0;
};

describe("the budget reserves exactly the output the upstream is asked for", () => {
  it.each(CASES)("$client: $name, on every upstream protocol", async ({ client, body }) => {
    const checked: string[] = [];
    for (const route of routes) {
      const request = { model: route.model, ...body };
      const refused = await send(client, request, POOR);
      expect(refused.status, `${route.model}: ${refused.text}`).toBe(402);
      // Google's envelope (the Gemini API) carries the gateway's details as an ErrorInfo's metadata.
      const details = client === "gemini" ? refused.json.error.details.find((d: any) => d.reason === "BUDGET_EXCEEDED")?.metadata : refused.json.error.details;
      const reserved: string = details.request_max_usd;
      clear();
      const served = await send(client, request, RICH);
      const upstream = route.seen(client);
      if (!upstream) {
        // The translator refused it before any upstream call (n > 1 on Anthropic): nothing was spent.
        expect(served.status, `${route.model}: ${served.text}`).toBe(400);
        continue;
      }
      const asked = billableOutput(upstream);
      expect(reserved, `${route.model} (${upstream.wire}) asked for ${asked} output tokens: ${JSON.stringify(upstream.body).slice(0, 300)}`).toBe(picoToUsd(BigInt(asked) * OUT_PICO));
      checked.push(route.model);
    }
    expect(checked.length).toBeGreaterThanOrEqual(6);
  });

  it("Messages' thinking reaches a model that can think as its own knob, and is reserved as sent; elsewhere it is dropped", async () => {
    const body = { messages: hi, max_tokens: 5000, thinking: { type: "enabled", budget_tokens: 2000 } };
    const reserve = async (model: string) => (await send("messages", { model, ...body }, POOR)).json.error.details.request_max_usd;
    clear();
    expect((await send("messages", { model: "t/gemini-thinking", ...body }, RICH)).status).toBe(200);
    // 2000 rounds up to the medium effort's 2048, billed beside maxOutputTokens.
    expect(gemini.requests.at(-1)!.body.generationConfig).toMatchObject({ maxOutputTokens: 5000, thinkingConfig: { thinkingBudget: 2048, includeThoughts: true } });
    expect(await reserve("t/gemini-thinking")).toBe(picoToUsd(BigInt(5000 + 2048) * OUT_PICO));
    expect((await send("messages", { model: "t/chat-thinking", ...body }, RICH)).status).toBe(200);
    expect(openai.requests.at(-1)!.body).toMatchObject({ reasoning_effort: "medium", max_completion_tokens: 5000 });
    const sent = await send("messages", { model: "t/gemini", ...body }, RICH);
    expect(sent.headers.get("x-mg-dropped-params")).toBe("thinking");
    expect(gemini.requests.at(-1)!.body.generationConfig.thinkingConfig).toBeUndefined();
    expect(await reserve("t/gemini")).toBe(picoToUsd(5000n * OUT_PICO));
  });

  it("max_tokens 1 with max_completion_tokens 60000 on Claude is refused against a $0.05 budget: it may cost $0.48", async () => {
    // The larger alias counts; translated, it is sent (and reserved) at the model's maximum, 32 000 tokens.
    const r = await send("chat", { model: "t/anthropic", messages: hi, max_tokens: 1, max_completion_tokens: 60000 }, CAPPED);
    expect(r.status).toBe(402);
    expect(r.json.error).toMatchObject({ code: "BUDGET_EXCEEDED", details: { request_max_usd: "0.48", budget_usd: "0.05" } });
    clear();
    expect((await send("chat", { model: "t/anthropic", messages: hi, max_completion_tokens: 1000 }, CAPPED)).status).toBe(200);
    expect(anthropic.requests.at(-1)!.body.max_tokens).toBe(1000);
  });

  it("the tokens-per-minute limit charges the output the upstream is asked for, whichever alias names it", async () => {
    // 60 000 tokens asked of a 10 000-token window: the whole window is charged, then corrected by the real usage. A
    // stream's headers leave before the correction, so they show the charge; a JSON answer's show the corrected window.
    const big = await send("chat", { model: "t/anthropic", messages: hi, max_tokens: 1, max_completion_tokens: 60000, stream: true }, TPM);
    expect(big.status).toBe(200);
    expect(big.headers.get("x-ratelimit-remaining-tokens")).toBe("0");
    // The stream's charge is corrected with its ledger record, which may come just after the response ends.
    const bigId = big.headers.get("x-request-id");
    await vi.waitFor(async () => expect((await gw.gateway.store.ledger({})).some((r) => r.requestId === bigId)).toBe(true), { timeout: 5000, interval: 20 });
    const small = await send("chat", { model: "t/anthropic", messages: hi, max_tokens: 1, max_completion_tokens: 100, stream: true }, TPM);
    expect(Number(small.headers.get("x-ratelimit-remaining-tokens"))).toBeLessThan(10_000 - 100);
    expect(Number(small.headers.get("x-ratelimit-remaining-tokens"))).toBeGreaterThan(9_000);
  });
});
