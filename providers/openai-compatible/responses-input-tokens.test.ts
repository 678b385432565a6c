// The driver's count op against the fake OpenAI /responses upstream (test/upstreams/openai-responses.ts), which
// refuses a create-only parameter on /responses/input_tokens as OpenAI does; Azure, whose /responses is not under
// its deployment path, has no such op (its targets are counted through translation).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOpenAIDriver } from "./index.ts";
import { startFakeOpenAIResponses, type FakeOpenAIWithResponses } from "../../test/upstreams/openai-responses.ts";
import { TOKEN_COUNT_HEADER, type CallOptions, type ProviderDriver, type Target } from "../../core/contracts/provider.ts";
import { GatewayError } from "../../core/errors.ts";

let up: FakeOpenAIWithResponses;
let driver: ProviderDriver & { client: { close(): Promise<void> } };
const target: Target = { modelId: "openai/gpt-4.1", provider: "up", upstreamModel: "gpt-4.1", pricing: {}, nativeResponses: true };
const call: CallOptions = { signal: new AbortController().signal, requestId: "r", clientHeaders: {}, reportUsage: () => {}, reportFirstToken: () => {} };

beforeAll(async () => {
  up = await startFakeOpenAIResponses();
  driver = createOpenAIDriver("up", { protocol: "openai", base_url: up.baseUrl, api_key: "sk-fake-upstream" }, { timeoutMs: 5000 });
});
afterAll(async () => {
  await driver?.close?.();
  await up?.close();
});

describe("openai driver: countResponsesTokens", () => {
  it("sends the count's own fields to /v1/responses/input_tokens with the upstream model id, and answers its count", async () => {
    const body = { model: "openai/gpt-4.1", input: "Hi", tools: [{ type: "web_search" }], tool_choice: "auto", max_output_tokens: 100, stream: true, store: false, providerOptions: { gateway: {} } };
    const r = await driver.countResponsesTokens!(body, target, call);
    const sent = up.requests.at(-1)!;
    expect(sent.path).toBe("/v1/responses/input_tokens");
    expect(sent.body).toEqual({ model: "gpt-4.1", input: "Hi", tools: [{ type: "web_search" }], tool_choice: "auto" });
    expect(r).toMatchObject({ kind: "json", headers: { [TOKEN_COUNT_HEADER]: "upstream" }, body: { input_tokens: expect.any(Number) } });
  });

  it("the upstream's refusal is a GatewayError with its status and message, as a create's is", async () => {
    const err = await driver.countResponsesTokens!({ model: "x", input: "Hi", tools: [{ type: "no_such_tool" }] }, target, call).catch((e) => e);
    expect(err).toBeInstanceOf(GatewayError);
    expect(err.status).toBe(400);
    expect(err.message).toContain("no_such_tool");
  });

  it("is not offered on Azure", () => {
    const azure = createOpenAIDriver("az", { protocol: "openai", flavor: "azure", base_url: up.baseUrl, api_key: "k" }, { timeoutMs: 5000 });
    expect(azure.countResponsesTokens).toBeUndefined();
    return azure.close?.();
  });
});
