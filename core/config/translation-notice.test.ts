import { describe, expect, it } from "vitest";
import { untranslatedNotice } from "./translation-notice.ts";

const config = {
  models: {
    "a/claude": { endpoints: [{ provider: "anthropic" }] },
    "g/gemini": { type: "language", endpoints: [{ provider: "gemini" }] },
    "o/embed": { type: "embedding", endpoints: [{ provider: "openai" }] },
  },
} as any;

describe("untranslatedNotice", () => {
  it("names the language models when the pipeline cannot translate, Gemini included", () => {
    const n = untranslatedNotice(config, ["auth", "router"]);
    expect(n).toContain("pipeline has no stream-transcoder");
    expect(n).toContain("language models: a/claude, g/gemini)");
    expect(n).not.toContain("o/embed");
    expect(n).toContain("every Gemini API (/v1beta) request");
  });

  it("is silent with stream-transcoder, or with no language model", () => {
    expect(untranslatedNotice(config, ["auth", "stream-transcoder"])).toBeUndefined();
    expect(untranslatedNotice({ models: { e: { type: "embedding", endpoints: [] } } } as any, [])).toBeUndefined();
  });
});
