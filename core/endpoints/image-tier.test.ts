import { describe, expect, it } from "vitest";
import type { ModelRuntime } from "../config/runtime.ts";
import { imageTier } from "./image-tier.ts";

const model = (id: string, limits?: Record<string, unknown>, pricing?: Record<string, unknown>) =>
  ({ id, config: { limits }, endpoints: pricing ? [{ provider: "p", upstreamModel: id, pricing }] : [] }) as unknown as ModelRuntime;
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

  it("refuses a quality and size that are each listed but that no tier of an endpoint prices together", () => {
    const tiers = { image: "0.04", image_tiers: { standard: { "1024x1024": "0.04", "1792x1024": "0.08" }, hd: { "1024x1024": "0.08" } } };
    const partial = model("acme/partial", { sizes: ["1024x1024", "1792x1024"], qualities: ["standard", "hd"] }, tiers);
    expect(imageTier([partial], { quality: "hd" })).toEqual({ size: "1024x1024", quality: "hd" });
    expect(imageTier([partial], { size: "1792x1024" })).toEqual({ size: "1792x1024", quality: "standard" });
    expect(() => imageTier([partial], { quality: "hd", size: "1792x1024" })).toThrow(expect.objectContaining({ status: 400, details: { field: "size", supported: ["1024x1024"], model: "acme/partial" } }));
    // an endpoint with only a flat image price prices every size and quality its limits allow
    expect(imageTier([model("acme/flat", { sizes: ["512x512"] }, { image: "0.01" })], {})).toEqual({ size: "512x512" });
  });
});
