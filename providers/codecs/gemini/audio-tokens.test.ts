import { describe, expect, it } from "vitest";
import { geminiAudioTokens } from "./audio-tokens.ts";

describe("geminiAudioTokens", () => {
  it("reads the AUDIO entries of promptTokensDetails, the cached ones apart (cacheTokensDetails)", () => {
    const m = {
      promptTokenCount: 100_000, cachedContentTokenCount: 60_000,
      promptTokensDetails: [{ modality: "AUDIO", tokenCount: 99_990 }, { modality: "TEXT", tokenCount: 10 }],
      cacheTokensDetails: [{ modality: "AUDIO", tokenCount: 60_000 }],
    };
    expect(geminiAudioTokens(m)).toEqual({ input: 39_990, cached: 60_000 });
  });

  it("no details, or none of audio: none", () => {
    expect(geminiAudioTokens({ promptTokenCount: 5 })).toEqual({ input: 0, cached: 0 });
    expect(geminiAudioTokens({ promptTokensDetails: [{ modality: "TEXT", tokenCount: 5 }, { modality: "AUDIO", tokenCount: "x" }] })).toEqual({ input: 0, cached: 0 });
  });
});
