import { describe, expect, it } from "vitest";
import { aModelOfType } from "./model-type-words.ts";

describe("aModelOfType", () => {
  it("writes each catalog type with its own article", () => {
    expect(["language", "embedding", "image", "video", "reranking"].map(aModelOfType)).toEqual([
      "a language model", "an embedding model", "an image model", "a video model", "a reranking model",
    ]);
  });
});
