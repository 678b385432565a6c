import { describe, expect, it } from "vitest";
import Big from "big.js";
import { endpointEntry, modelEntry, type EndpointView } from "./models-view.ts";
import { costOf } from "../money/money.ts";
import type { ModelRuntime } from "../config/runtime.ts";
import type { Pricing } from "../generated/types/gateway.ts";

function model(pricing: Pricing | undefined): ModelRuntime {
  const ep = { provider: "alpha", model: "chat-1", ...(pricing ? { pricing } : {}) };
  return { id: "acme/chat-1", type: "language", config: { endpoints: [ep] }, endpoints: [] } as unknown as ModelRuntime;
}

function listed(pricing: Pricing | undefined) {
  const m = model(pricing);
  const view = { ep: m.config.endpoints[0]!, provider: undefined, stats: {}, status: "closed" } as unknown as EndpointView;
  return { list: modelEntry(m).pricing, endpoint: endpointEntry(m, view).pricing };
}

describe("catalog pricing", () => {
  it("shows the cache prices billing charges: an unset one is the input price, not 0", () => {
    const pricing = { input: "0.0000025", output: "0.00001" };
    const { list, endpoint } = listed(pricing);
    expect(list).toMatchObject({ input: "0.0000025", input_cache_read: "0.0000025", input_cache_write: "0.0000025" });
    expect(endpoint).toMatchObject({ prompt: "0.0000025", input_cache_read: "0.0000025", input_cache_write: "0.0000025" });
    // What one cached token costs is what the listing says.
    expect(costOf({ inputTokens: 0, outputTokens: 0, cacheReadTokens: 1 }, pricing).toString()).toBe(list.input_cache_read);
    expect(costOf({ inputTokens: 0, outputTokens: 0, cacheWriteTokens: 1 }, pricing).toString()).toBe(list.input_cache_write);
  });

  it("shows cache prices that are set as they are, and 0 for an endpoint without prices (it costs nothing)", () => {
    expect(listed({ input: "0.000003", output: "0.000015", input_cache_read: "0.0000003", input_cache_write: "0.00000375" }).endpoint)
      .toMatchObject({ input_cache_read: "0.0000003", input_cache_write: "0.00000375" });
    expect(listed({ input: "0.000003", input_cache_read: "0" }).list).toMatchObject({ input_cache_read: "0", input_cache_write: "0.000003" });
    expect(listed(undefined).list).toMatchObject({ input: "0", output: "0", input_cache_read: "0", input_cache_write: "0" });
  });
});

describe("catalog pricing of a long-prompt tier", () => {
  const pricing: Pricing = {
    input: "0.00000125", output: "0.00001", input_cache_read: "0.000000125",
    long_context: { above_input_tokens: 200_000, input: "0.0000025", output: "0.000015", input_cache_read: "0.00000025" },
  };

  it("lists the tier's threshold and the prices a request over it pays, cache prices as billed", () => {
    const { list, endpoint } = listed(pricing);
    const tier = { above_input_tokens: 200_000, input_cache_read: "0.00000025", input_cache_write: "0.0000025" };
    expect(list.long_context).toEqual({ ...tier, input: "0.0000025", output: "0.000015" });
    expect(endpoint.long_context).toEqual({ ...tier, prompt: "0.0000025", completion: "0.000015" });
    // A request over the threshold costs what the listing says, per token.
    const over = { inputTokens: 200_001, outputTokens: 1 };
    expect(costOf(over, pricing).toString()).toBe(new Big(list.long_context!.input).times(200_001).plus(list.long_context!.output).toString());
  });

  it("a Sonnet endpoint: context_length is its 200k window, the tier names the 1M window a request asking for it gets", () => {
    const sonnet: Pricing = { input: "0.000003", output: "0.000015", long_context: { above_input_tokens: 200_000, input: "0.000006", output: "0.0000225", context_window: 1_000_000 } };
    const m = model(sonnet);
    (m.config.endpoints[0] as { context_window?: number }).context_window = undefined;
    (m.config as { context_window?: number }).context_window = 200_000;
    const view = { ep: m.config.endpoints[0]!, provider: undefined, stats: {}, status: "closed" } as unknown as EndpointView;
    const entry = endpointEntry(m, view);
    expect(entry.context_length).toBe(200_000);
    expect(entry.pricing.long_context).toMatchObject({ above_input_tokens: 200_000, prompt: "0.000006", context_window: 1_000_000 });
    expect(modelEntry(m).pricing.long_context).toMatchObject({ input: "0.000006", context_window: 1_000_000 });
    // A tier without a window of its own lists none.
    expect(listed(pricing).endpoint.long_context).not.toHaveProperty("context_window");
  });

  it("an endpoint without a tier lists none", () => {
    expect(listed({ input: "0.000001" }).list.long_context).toBeUndefined();
    expect(listed({ input: "0.000001" }).endpoint.long_context).toBeUndefined();
  });
});
