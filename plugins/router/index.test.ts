// The router's answer when a request is left with no target: a client filter (`only`) that removes every endpoint
// of a model still served is the client's 400 naming what serves it; the retired-model 404 is for a model nothing
// here can serve any more.
import { describe, expect, it } from "vitest";
import type { ModelRuntime } from "../../core/config/runtime.ts";
import type { ModelConfig } from "../../core/generated/types/gateway.ts";
import { retirementInstants } from "../../core/config/retirement.ts";
import type { GatewayError } from "../../core/errors.ts";
import router from "./index.ts";

const NOW = Date.UTC(2026, 10, 28, 12);
const price = { input: "0.0000008", output: "0.000004" };

function model(id: string, endpoints: ModelConfig["endpoints"]): ModelRuntime {
  return { id, type: "language", config: { endpoints, context_window: 1000, max_tokens: 100 }, endpoints: [], retiresAt: retirementInstants(endpoints) };
}

/** The shipped Claude 3.5 Haiku: retired on the Claude API and on Vertex AI, still on Bedrock. */
const haiku = model("anthropic/claude-3.5-haiku", [
  { provider: "anthropic", model: "claude-3-5-haiku-20241022", retires: "2026-02-19", replacement: "anthropic/claude-haiku-4.5", pricing: price },
  { provider: "vertex", model: "claude-3-5-haiku@20241022", retires: "2026-07-05", replacement: "anthropic/claude-haiku-4.5", pricing: price },
  { provider: "bedrock", model: "us.anthropic.claude-3-5-haiku-20241022-v1:0", pricing: price },
]);
/** An own model: a retired fake2 endpoint beside a live openai one. */
const dual = model("own/dual", [
  { provider: "fake2", model: "old", retires: "2026-11-01", pricing: price },
  { provider: "openai", model: "gpt-4o-mini", pricing: price },
]);

/** An own model on two live providers. */
const two = model("own/two", [
  { provider: "openai", model: "gpt-4o-mini", pricing: price },
  { provider: "groq", model: "llama", pricing: price },
]);

/** Runs the router on one request; returns the error it threw, or the targets' providers. */
async function route(body: Record<string, unknown>, enabled: string[]): Promise<{ error?: GatewayError; providers?: string[] }> {
  const models = new Map([haiku, dual, two].map((m) => [m.id, m]));
  const ctx: any = {
    endpoint: "chat",
    body: { max_tokens: 10, messages: [{ role: "user", content: "Hi" }], ...body },
    auth: { sandbox: false, project: { id: "p", config: {} } },
    gateway: { config: { store: { kind: "sqlite" } }, startConfig: { store: { kind: "sqlite" } }, onClose() {} },
    config: {
      models,
      providers: new Map(enabled.map((p) => [p, {}])),
      disabledProviders: new Map<string, string>(),
      raw: { providers: Object.fromEntries(["anthropic", "vertex", "bedrock", "openai", "fake2", "groq"].map((p) => [p, { protocol: "openai" }])) },
    },
  };
  const realNow = Date.now;
  Date.now = () => NOW;
  try {
    await router.handle(ctx, async () => {}, undefined as any);
    return { providers: ctx.targets.map((t: any) => t.provider) };
  } catch (error) {
    return { error: error as GatewayError };
  } finally {
    Date.now = realNow;
  }
}

const only = (...providers: string[]) => ({ providerOptions: { gateway: { only: providers } } });
const SERVED = ["anthropic", "gemini", "bedrock"];

describe("router: only leaving a served model no target", () => {
  it("the model is served (bedrock) without only", async () => {
    expect(await route({ model: haiku.id }, SERVED)).toEqual({ providers: ["bedrock"] });
    expect(await route({ model: haiku.id, ...only("bedrock") }, SERVED)).toEqual({ providers: ["bedrock"] });
  });

  it("only naming its retired Claude API endpoint is the 400 naming only, offering bedrock and saying that endpoint retired", async () => {
    const { error } = await route({ model: haiku.id, ...only("anthropic") }, SERVED);
    expect(error?.status).toBe(400);
    expect(error?.code).toBe("INVALID_REQUEST");
    expect(error?.details).toEqual({ field: "providerOptions.gateway.only", offered: ["bedrock"] });
    expect(error?.message).toContain("anthropic's endpoint retired on 2026-02-19");
    expect(error?.message).not.toContain("vertex");
  });

  it("only naming its retired (and unconfigured) Vertex AI endpoint is the same 400, naming vertex's day", async () => {
    const { error } = await route({ model: haiku.id, ...only("vertex") }, SERVED);
    expect(error?.status).toBe(400);
    expect(error?.details).toEqual({ field: "providerOptions.gateway.only", offered: ["bedrock"] });
    expect(error?.message).toContain("vertex's endpoint retired on 2026-07-05");
  });

  it("only naming a provider the model never had offers only the live, configured providers", async () => {
    const { error } = await route({ model: haiku.id, ...only("groq") }, SERVED);
    expect(error?.status).toBe(400);
    expect(error?.details).toEqual({ field: "providerOptions.gateway.only", offered: ["bedrock"] });
  });

  it("an own model: only naming its retired endpoint's provider is the 400 offering the live one", async () => {
    const { error } = await route({ model: dual.id, ...only("fake2") }, ["fake2", "openai"]);
    expect(error?.status).toBe(400);
    expect(error?.details).toEqual({ field: "providerOptions.gateway.only", offered: ["openai"] });
    expect(error?.message).toContain("fake2's endpoint retired on 2026-11-01");
  });

  it("only naming a live endpoint's provider the gateway has no key for is the 400 saying so", async () => {
    const { error } = await route({ model: two.id, ...only("groq") }, ["openai"]);
    expect(error?.status).toBe(400);
    expect(error?.details).toEqual({ field: "providerOptions.gateway.only", offered: ["openai"] });
    expect(error?.message).toContain("groq is not configured on this gateway");
  });

  it("with no live endpoint configured the retired-model 404 stands, only or not", async () => {
    for (const body of [{ model: haiku.id }, { model: haiku.id, ...only("anthropic") }]) {
      const { error } = await route(body, ["anthropic", "gemini"]);
      expect(error?.status).toBe(404);
      expect(error?.code).toBe("MODEL_NOT_FOUND");
      expect(error?.message).toContain("its other endpoints, bedrock, are not configured on this gateway");
    }
  });
});
