import { describe, expect, it } from "vitest";
import { worstCasePico } from "./worst-case.ts";
import { picoToUsd } from "../../core/money/money.ts";

const worstCaseCost = (c: GatewayContext) => ({ toFixed: () => picoToUsd(worstCasePico(c)) });
import type { GatewayContext } from "../../core/pipeline/context.ts";

const model = (id: string, type: string, endpoints: { pricing: Record<string, string>; maxTokens?: number; contextWindow?: number }[]) =>
  [id, { id, type, config: {}, endpoints: endpoints.map((e) => ({ provider: "p", upstreamModel: id, ...e })) }] as const;

function ctx(endpoint: string, body: unknown, length?: number): GatewayContext {
  const models = new Map<string, any>([
    model("a/cheap", "language", [{ pricing: { input: "0.000001", output: "0.000002" }, maxTokens: 100, contextWindow: 1000 }, { pricing: { input: "0.000002", output: "0.000004" }, maxTokens: 100, contextWindow: 1000 }]),
    model("a/dear", "language", [{ pricing: { input: "0.00001", output: "0.00002", input_cache_write: "0.0000125" }, maxTokens: 50, contextWindow: 1000 }]),
    model("a/embed", "embedding", [{ pricing: { input: "0.0000001" }, contextWindow: 8000 }]),
  ]);
  return { endpoint, body, headers: length ? { "content-length": String(length) } : {}, config: { models } } as unknown as GatewayContext;
}

describe("worst-case cost", () => {
  it("max_tokens (or the model maximum) at the dearest endpoint, input bounded by the body size", () => {
    // 200 bytes in, 10 out: dearer endpoint 200 * 0.000002 + 10 * 0.000004
    expect(worstCaseCost(ctx("chat", { model: "a/cheap", max_tokens: 10 }, 200)).toFixed()).toBe("0.00044");
    // No max_tokens: the endpoint's maximum (100), times n.
    expect(worstCaseCost(ctx("chat", { model: "a/cheap", n: 2 }, 200)).toFixed()).toBe("0.0012");
  });

  it("covers every fallback model, pricing input at the dearer cache-write price", () => {
    const c = worstCaseCost(ctx("chat", { model: "a/cheap", max_tokens: 10, providerOptions: { gateway: { models: ["a/dear"] } } }, 200));
    expect(c.toFixed()).toBe("0.0027"); // 200 * 0.0000125 + 10 * 0.00002
  });

  it("input is capped at the context window; embeddings reserve input only", () => {
    expect(worstCaseCost(ctx("chat", { model: "a/cheap", max_tokens: 1 }, 1_000_000)).toFixed()).toBe("0.002004");
    expect(worstCaseCost(ctx("embeddings", { model: "a/embed", input: "x" }, 100)).toFixed()).toBe("0.00001");
  });

  it("a Responses request continuing a stored conversation reserves input up to the context window", () => {
    // 1000 tokens of context at the dearer endpoint (0.000002) + 10 out (0.000004): the stored turns are not in the body.
    expect(worstCaseCost(ctx("responses", { model: "a/cheap", max_output_tokens: 10, previous_response_id: "resp_1", input: "Hi" }, 80)).toFixed()).toBe("0.00204");
    expect(worstCaseCost(ctx("responses", { model: "a/cheap", max_output_tokens: 10, input: [{ type: "item_reference", id: "msg_1" }] }, 80)).toFixed()).toBe("0.00204");
    // A self-contained request is bounded by its size as on chat.
    expect(worstCaseCost(ctx("responses", { model: "a/cheap", max_output_tokens: 10, input: "Hi" }, 80)).toFixed()).toBe("0.0002");
  });
});
