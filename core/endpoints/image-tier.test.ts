import { describe, expect, it } from "vitest";
import type { ModelRuntime } from "../config/runtime.ts";
import { imageTier } from "./image-tier.ts";

const model = (id: string, limits?: Record<string, unknown>) => ({ id, config: { limits } }) as unknown as ModelRuntime;
const dalle = model("openai/dall-e-3", { sizes: ["1024x1024"], qualities: ["standard"] });
const free = model("sim/pixel");

describe("imageTier", () => {
  it("passes what a model without listed tiers is asked, and sends nothing it was not asked", () => {
    expect(imageTier([free], { size: "64x48", quality: "anything" })).toEqual({ size: "64x48", quality: "anything" });
    expect(imageTier([free], {})).toEqual({});
  });

  it("fills the priced tier when the request names none, also for a fallback that lists one", () => {
    expect(imageTier([dalle], {})).toEqual({ size: "1024x1024", quality: "standard" });
    expect(imageTier([free, dalle], {})).toEqual({ size: "1024x1024", quality: "standard" });
  });

  it("refuses an unpriced value on any model of the chain, naming the field and the model", () => {
    expect(() => imageTier([dalle], { quality: "hd" })).toThrow(expect.objectContaining({ status: 400, details: { field: "quality", supported: ["standard"], model: "openai/dall-e-3" } }));
    expect(() => imageTier([free, dalle], { size: "1792x1024" })).toThrow(/size 1792x1024 is not supported by openai\/dall-e-3/);
    const wide = model("acme/wide", { sizes: ["1792x1024"] });
    expect(() => imageTier([wide, dalle], {})).toThrow(/size 1792x1024 \(sent when the request names no size\)/);
  });
});
