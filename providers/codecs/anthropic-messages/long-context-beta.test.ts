// Anthropic's long-context beta as the drivers that speak Messages find it in the call they build.
import { describe, expect, it } from "vitest";
import { headersOpenLongContext, namesLongContextBeta } from "./long-context-beta.ts";

const BETA = "context-1m-2025-08-07";

describe("the long-context beta named", () => {
  it("in a header's comma list or a body's array, and nowhere else", () => {
    expect(namesLongContextBeta(`files-api-2025-04-14, ${BETA}`)).toBe(true);
    expect(namesLongContextBeta([BETA])).toBe(true);
    expect(namesLongContextBeta(["files-api-2025-04-14"])).toBe(false);
    expect(namesLongContextBeta(undefined)).toBe(false);
    expect(headersOpenLongContext({ "Anthropic-Beta": BETA })).toBe(true);
  });
});
