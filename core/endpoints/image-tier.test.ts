import { describe, expect, it } from "vitest";
import type { ModelRuntime } from "../config/runtime.ts";
import { servingTiers, targetTier } from "./image-tier.ts";

const model = (id: string, limits?: Record<string, unknown>, pricing?: Record<string, unknown>) =>
  ({ id, config: { limits }, endpoints: pricing ? [{ provider: "p", upstreamModel: id, pricing }] : [] }) as unknown as ModelRuntime;
const dalle = model("openai/dall-e-3", { sizes: ["1024x1024"], qualities: ["standard"] });
const free = model("sim/pixel");
const flat = { image: "0.04" } as any;
const gptTiers = { image: "0.042", image_tiers: { medium: { "1024x1024": "0.042" }, low: { "1024x1024": "0.011" } } } as any;
const gpt = model("openai/gpt-image-1", { sizes: ["1024x1024"], qualities: ["medium", "low"] }, gptTiers);
const models = new Map([dalle, free, gpt].map((m) => [m.id, m]));
const target = (m: ModelRuntime, pricing = flat) => ({ modelId: m.id, pricing });
const serve = (ts: ReturnType<typeof target>[], body: { size?: string; quality?: string }, requested = models.get(ts[0]?.modelId ?? "")!) =>
  servingTiers(ts, (id) => models.get(id), requested, body).map(({ target: t, tier }) => [t.modelId, tier]);

describe("targetTier", () => {
  it("passes what a model without listed tiers is asked, and sends nothing it was not asked", () => {
    expect(targetTier(free, flat, { size: "64x48", quality: "anything" }).tier).toEqual({ size: "64x48", quality: "anything" });
    expect(targetTier(free, flat, {}).tier).toEqual({});
  });

  it("fills the model's own first listed value when the request names none", () => {
    expect(targetTier(dalle, flat, {}).tier).toEqual({ size: "1024x1024", quality: "standard" });
    expect(targetTier(gpt, gptTiers, {}).tier).toEqual({ size: "1024x1024", quality: "medium" });
  });

  it("refuses a value the model does not list, naming the field and the model", () => {
    expect(targetTier(dalle, flat, { quality: "hd" }).refused).toMatchObject({ status: 400, details: { field: "quality", supported: ["standard"], model: "openai/dall-e-3" } });
    expect(targetTier(dalle, flat, { size: "1792x1024" }).refused?.message).toMatch(/size 1792x1024 is not supported by openai\/dall-e-3/);
  });

  it("refuses a quality and size that are each listed but that no tier of the endpoint prices together", () => {
    const tiers = { image: "0.04", image_tiers: { standard: { "1024x1024": "0.04", "1792x1024": "0.08" }, hd: { "1024x1024": "0.08" } } } as any;
    const partial = model("acme/partial", { sizes: ["1024x1024", "1792x1024"], qualities: ["standard", "hd"] }, tiers);
    expect(targetTier(partial, tiers, { quality: "hd" }).tier).toEqual({ size: "1024x1024", quality: "hd" });
    expect(targetTier(partial, tiers, { size: "1792x1024" }).tier).toEqual({ size: "1792x1024", quality: "standard" });
    expect(targetTier(partial, tiers, { quality: "hd", size: "1792x1024" }).refused).toMatchObject({ status: 400, details: { field: "size", supported: ["1024x1024"], model: "acme/partial" } });
    // an endpoint with only a flat image price prices every size and quality its limits allow
    expect(targetTier(model("acme/flat", { sizes: ["512x512"] }), flat, {}).tier).toEqual({ size: "512x512" });
  });
});

describe("servingTiers", () => {
  it("gives each target of a fallback chain its own model's default tier, in either order", () => {
    expect(serve([target(dalle), target(gpt, gptTiers)], {})).toEqual([
      ["openai/dall-e-3", { size: "1024x1024", quality: "standard" }],
      ["openai/gpt-image-1", { size: "1024x1024", quality: "medium" }],
    ]);
    expect(serve([target(gpt, gptTiers), target(dalle)], {}).map(([id]) => id)).toEqual(["openai/gpt-image-1", "openai/dall-e-3"]);
  });

  it("leaves out a target that does not list a named value, whichever place it has in the chain", () => {
    expect(serve([target(gpt, gptTiers), target(dalle)], { quality: "low" })).toEqual([["openai/gpt-image-1", { size: "1024x1024", quality: "low" }]]);
    expect(serve([target(dalle), target(gpt, gptTiers)], { quality: "low" })).toEqual([["openai/gpt-image-1", { size: "1024x1024", quality: "low" }]]);
    expect(serve([target(free), target(dalle)], { size: "1792x1024" })).toEqual([["sim/pixel", { size: "1792x1024" }]]);
  });

  it("refuses with the first target's 400 when no target can serve the request", () => {
    expect(() => serve([target(dalle), target(gpt, gptTiers)], { quality: "high" })).toThrow(
      expect.objectContaining({ status: 400, details: { field: "quality", supported: ["standard"], model: "openai/dall-e-3" } }));
  });

  it("with no target at all still refuses what the requested model refuses", () => {
    expect(() => serve([], { quality: "hd" }, gpt)).toThrow(expect.objectContaining({ status: 400, details: expect.objectContaining({ field: "quality", model: "openai/gpt-image-1" }) }));
    expect(serve([], { quality: "low" }, gpt)).toEqual([]);
  });
});

// OpenAI SDK code sends gpt-image's documented `auto` and dall-e's `hd` / `standard`: each is sent (and billed) as the
// model's own listed value it stands for, never passed on for the provider to pick a tier the gateway did not price.
describe("targetTier with OpenAI's other names for a quality or size", () => {
  const fullTiers = { image: "0.042", image_tiers: { low: { "1024x1024": "0.011", "1536x1024": "0.016" }, medium: { "1024x1024": "0.042", "1536x1024": "0.063" }, high: { "1024x1024": "0.167", "1536x1024": "0.25" } } } as any;
  const gptImage = model("openai/gpt-image-1", { sizes: ["1024x1024", "1536x1024"], qualities: ["medium", "low", "high"] }, fullTiers);

  it("sends quality and size auto as the model's default tier, what a request naming neither is sent", () => {
    expect(targetTier(gptImage, fullTiers, { quality: "auto", size: "auto" }).tier).toEqual({ size: "1024x1024", quality: "medium" });
    expect(targetTier(gptImage, fullTiers, { quality: "auto", size: "1536x1024" }).tier).toEqual({ size: "1536x1024", quality: "medium" });
    expect(targetTier(gptImage, fullTiers, { quality: "low", size: "auto" }).tier).toEqual({ size: "1024x1024", quality: "low" });
  });

  it("sends hd as high and standard as medium to a model that lists those", () => {
    expect(targetTier(gptImage, fullTiers, { quality: "hd" }).tier).toEqual({ size: "1024x1024", quality: "high" });
    expect(targetTier(gptImage, fullTiers, { quality: "standard", size: "1536x1024" }).tier).toEqual({ size: "1536x1024", quality: "medium" });
  });

  it("keeps a value the model lists under that name, and still refuses what it does not serve", () => {
    const standardHd = model("acme/dall-e-3", { sizes: ["1024x1024"], qualities: ["standard", "hd"] });
    expect(targetTier(standardHd, flat, { quality: "hd" }).tier).toEqual({ size: "1024x1024", quality: "hd" });
    expect(targetTier(standardHd, flat, { quality: "auto" }).tier).toEqual({ size: "1024x1024", quality: "standard" });
    // dall-e's names mean nothing to a model that lists neither them nor high/medium
    expect(targetTier(gpt, gptTiers, { quality: "hd" }).refused).toMatchObject({ status: 400, details: { field: "quality", supported: ["medium", "low"] } });
    expect(targetTier(gptImage, fullTiers, { quality: "ultra" }).refused?.message).toBe("quality ultra is not supported by openai/gpt-image-1: it serves medium, low, high");
  });

  it("passes auto on as it is to a model that lists no values (the provider's own default is then billed flat)", () => {
    expect(targetTier(free, flat, { quality: "auto", size: "auto" }).tier).toEqual({ size: "auto", quality: "auto" });
  });
});
