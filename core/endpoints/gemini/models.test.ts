// The Gemini model list follows retirement as GET /v1/models does: a model whose every endpoint has retired is not
// listed and models.get() is its 404; a model with a live endpoint shows that endpoint's token limits.
import { afterEach, describe, expect, it, vi } from "vitest";
import { geminiModelsEndpoints } from "./models.ts";
import { retirementInstants } from "../../config/retirement.ts";
import type { ModelConfig } from "../../generated/types/gateway.ts";
import type { ModelRuntime } from "../../config/runtime.ts";
import type { GatewayContext } from "../../pipeline/context.ts";

const DAY = Date.UTC(2026, 10, 28);
function model(id: string, endpoints: ModelConfig["endpoints"]): ModelRuntime {
  const retiresAt = retirementInstants(endpoints);
  return { id, type: "language", config: { endpoints }, endpoints: [], ...(retiresAt ? { retiresAt } : {}) };
}
const models = new Map([
  ["own/gone", model("own/gone", [{ provider: "anthropic", model: "claude-gone-1", retires: "2026-11-28", context_window: 200_000, max_tokens: 8192 }])],
  ["own/half", model("own/half", [
    { provider: "anthropic", model: "claude-gone-1", retires: "2026-11-28", context_window: 200_000, max_tokens: 8192 },
    { provider: "vertex", model: "claude-half@1", context_window: 100_000, max_tokens: 4096 },
  ])],
]);

async function call(path: string, id?: string) {
  const ctx = { path, params: id ? { _: id } : {}, config: { models } } as unknown as GatewayContext;
  await geminiModelsEndpoints[0]!.terminal!(ctx);
  return (ctx.response as { body: any }).body;
}

afterEach(() => vi.useRealTimers());

describe("Gemini models list and get with retired endpoints", () => {
  it("the day before, lists both models; from 00:00 UTC that day, only the one with an endpoint left, at its limits", async () => {
    vi.useFakeTimers({ toFake: ["Date"], now: DAY - 1 });
    expect((await call("/api/v1beta/models?pageSize=1000")).models.map((m: any) => m.name)).toEqual(["models/own/gone", "models/own/half"]);
    vi.setSystemTime(DAY);
    const listed = (await call("/api/v1beta/models?pageSize=1000")).models;
    expect(listed.map((m: any) => m.name)).toEqual(["models/own/half"]);
    expect([listed[0].inputTokenLimit, listed[0].outputTokenLimit]).toEqual([100_000, 4096]);
  });

  it("models.get() of a fully retired model is the 404 naming the day", async () => {
    vi.useFakeTimers({ toFake: ["Date"], now: DAY });
    await expect(call("/api/v1beta/models/own/gone", "own/gone")).rejects.toMatchObject({ status: 404, code: "MODEL_NOT_FOUND", message: expect.stringContaining("retired on 2026-11-28") });
    expect((await call("/api/v1beta/models/own/half", "own/half")).name).toBe("models/own/half");
  });
});
