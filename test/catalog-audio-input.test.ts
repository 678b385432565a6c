// A catalog model priced for audio input (pricing.input_audio) takes audio, so GET /v1/models must list audio among its
// input modalities (the `audio` tag): Gemini 2.5 Flash-Lite, priced for audio since 43c040e and listed by Google as
// taking text, image, video, audio and PDF, was shown as text+image+file only.
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import YAML from "yaml";
import { architecture } from "../core/endpoints/models-view.ts";
import type { ModelRuntime } from "../core/config/runtime.ts";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const catalog = YAML.parse(readFileSync(join(root, "catalog", "models.yaml"), "utf8")).models as Record<string, any>;
const inputOf = (entry: any) => architecture({ config: entry, type: entry.type ?? "language" } as unknown as ModelRuntime).input_modalities;

describe("the catalog's audio-priced models", () => {
  const priced = Object.entries(catalog).filter(([, m]) => m.endpoints?.some((ep: any) => ep.pricing?.input_audio !== undefined));

  it("include the Gemini 2.5 Flash models", () => {
    expect(priced.map(([id]) => id)).toEqual(expect.arrayContaining(["google/gemini-2.5-flash", "google/gemini-2.5-flash-lite"]));
  });

  it("each list audio among the input modalities /v1/models shows", () => {
    for (const [id, m] of priced) expect(inputOf(m), id).toContain("audio");
    expect(inputOf(catalog["google/gemini-2.5-flash-lite"])).toEqual(["text", "image", "file", "audio"]);
  });
});
