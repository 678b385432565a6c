import { describe, expect, it } from "vitest";
import { mergedBetaHeader } from "./betas.ts";

describe("the anthropic-beta a call carries", () => {
  it("adds the client's betas to the configured ones under the configured spelling, each once", () => {
    expect(mergedBetaHeader({ "Anthropic-Beta": "context-1m-2025-08-07" }, "files-api-2025-04-14, context-1m-2025-08-07"))
      .toEqual({ "Anthropic-Beta": "context-1m-2025-08-07,files-api-2025-04-14" });
    expect(mergedBetaHeader(undefined, ["a", "b"])).toEqual({ "anthropic-beta": "a,b" });
  });

  it("is empty when the client sent none, so the configured header goes as it is", () => {
    expect(mergedBetaHeader({ "anthropic-beta": "context-1m-2025-08-07" }, undefined)).toEqual({});
  });
});
