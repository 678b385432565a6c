import { describe, expect, it } from "vitest";
import { aspectRatios } from "./videos.ts";
import { clampDuration } from "./video-duration.ts";
import { planDimensions, toBase64, truncateNormalise } from "./embeddings.ts";
import { calibrateAll } from "./rerank.ts";
import type { ModelRuntime } from "../config/runtime.ts";
import { withDeadline } from "./media.ts";
import { timeLimitCut } from "../time-limit-cut.ts";

const model = (config: Record<string, unknown>): ModelRuntime => ({ id: "x/y", type: "embedding", config: { endpoints: [], ...config } as never, endpoints: [] });

describe("media endpoint helpers", () => {
  it("derives aspect ratios from catalog sizes", () => {
    expect(aspectRatios({ sizes: ["1280x720", "720x1280", "1792x1024"] })).toEqual(["16:9", "9:16"]);
    expect(aspectRatios({ aspect_ratios: ["1:1"] })).toEqual(["1:1"]);
    expect(aspectRatios({})).toBeUndefined();
  });

  it("clamps durations to a list or a range", () => {
    expect(clampDuration(model({ limits: { durations: [4, 8, 12] } }), 5)).toBe(8);
    expect(clampDuration(model({ limits: { durations: [4, 8, 12] } }), 60)).toBe(12);
    expect(clampDuration(model({ limits: { durations: [8] } }), undefined)).toBe(8);
    expect(clampDuration(model({ limits: { min_duration: 2, max_duration: 6 } }), 1)).toBe(2);
    expect(clampDuration(model({}), 30)).toBe(10);
  });

  it("plans dimensions from the catalog", () => {
    expect(planDimensions(model({ dimensions: 1536 }), 256)).toEqual({ native: 256 });
    expect(planDimensions(model({ dimensions: 768, limits: { dimensions: "truncate" } }), 256)).toEqual({ truncate: 256 });
    expect(planDimensions(model({ dimensions: 384, limits: { dimensions_supported: false } }), 384)).toEqual({});
    expect(() => planDimensions(model({ dimensions: 384, limits: { dimensions_supported: false } }), 128)).toThrow(/not supported/);
    expect(() => planDimensions(model({ dimensions: 1024, limits: { dimension_values: [256, 512] } }), 300)).toThrow(/256, 512/);
    // A listed size above the default (Voyage's 2048 over 1024) is passed on; an unlisted larger one is refused.
    expect(planDimensions(model({ dimensions: 1024, limits: { dimension_values: [256, 512, 1024, 2048] } }), 2048)).toEqual({ native: 2048 });
    expect(() => planDimensions(model({ dimensions: 1024, limits: { dimension_values: [256, 512, 1024, 2048] } }), 1536)).toThrow(/256, 512, 1024, 2048/);
  });

  it("encodes base64 as little-endian float32 and re-normalises truncations", () => {
    const b = Buffer.from(toBase64([1, -2.5]), "base64");
    expect([b.readFloatLE(0), b.readFloatLE(4)]).toEqual([1, -2.5]);
    expect(truncateNormalise([3, 4, 12], 2)).toEqual([0.6, 0.8]);
  });

  it("calibrates a whole answer into 0..1 with one increasing map", () => {
    expect(calibrateAll([0.7, 0.2, Number.NaN])).toEqual([0.7, 0.2, 0]);
    // One logit outside 0..1 sends every score through the logistic, so 1.5 stays above 0.9.
    const [a, b, c, d] = calibrateAll([1.5, 0.9, 0.2, -0.5]);
    expect(a).toBeGreaterThan(b!);
    expect(b).toBeGreaterThan(c!);
    expect(c).toBeGreaterThan(d!);
    for (const x of [a, b, c, d]) expect(x! > 0 && x! < 1).toBe(true);
    expect(calibrateAll([5, Number.NaN])).toEqual([1 / (1 + Math.exp(-5)), 0]);
  });
});

// The hold's 504 went out while the work it aborted was still settling, its abort taken for a client that left: the
// request's ledger record was written before (and without) the attempt, which was then logged as 499 CANCELLED.
describe("withDeadline", () => {
  it("stops the work with its 504 as the abort's reason and answers once the work has settled", async () => {
    const steps: string[] = [];
    const err = await withDeadline(50, "Image generation on x/y", (signal) => new Promise((_, reject) => {
      signal.addEventListener("abort", () => {
        // what dispatch does at the abort: the attempt recorded as the limit's timeout, a moment later
        steps.push(`aborted by ${timeLimitCut(signal)?.code}`);
        setImmediate(() => {
          steps.push("attempt recorded");
          reject(new Error("aborted"));
        });
      }, { once: true });
    })).catch((e) => e);
    steps.push("answered");
    expect(err).toMatchObject({ status: 504, code: "UPSTREAM_TIMEOUT", message: "Image generation on x/y did not finish within 0.05 s", details: { limit_seconds: 0.05 } });
    expect(steps).toEqual(["aborted by UPSTREAM_TIMEOUT", "attempt recorded", "answered"]);
  });

  it("passes a client's leaving on as it is: no time limit's cut", async () => {
    const client = new AbortController();
    const seen = withDeadline(60_000, "x", (signal) => new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason), { once: true })), client.signal);
    client.abort(new Error("client left"));
    await expect(seen).rejects.toThrow("client left");
  });
});
