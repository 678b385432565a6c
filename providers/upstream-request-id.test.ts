import { describe, expect, it } from "vitest";
import { fromGeminiAnswer, upstreamRequestId, withUpstreamRequestId } from "./upstream-request-id.ts";

describe("upstreamRequestId", () => {
  it("reads each provider's header", () => {
    expect(upstreamRequestId({ "x-request-id": "req_openai" })).toBe("req_openai");
    expect(upstreamRequestId({ "request-id": "req_011CAnthropic" })).toBe("req_011CAnthropic");
    expect(upstreamRequestId({ "x-amzn-requestid": "0b5c6e0e-aws" })).toBe("0b5c6e0e-aws");
    expect(upstreamRequestId({ "x-goog-request-id": ["g1", "g2"] })).toBe("g1");
    expect(upstreamRequestId({ "content-type": "application/json" })).toBeUndefined();
  });

  it("passes on no value a header could not carry as sent, nor an overlong one", () => {
    expect(upstreamRequestId({ "x-request-id": "two words" })).toBeUndefined();
    expect(upstreamRequestId({ "x-request-id": "x".repeat(257) })).toBeUndefined();
    expect(upstreamRequestId({ "x-request-id": "", "request-id": "req_next" })).toBe("req_next");
  });
});

describe("withUpstreamRequestId", () => {
  it("adds the id beside the headers already there, and leaves them be without one", () => {
    expect(withUpstreamRequestId({ "x-should-retry": "false" }, "req_1")).toEqual({ "x-should-retry": "false", "x-mg-upstream-request-id": "req_1" });
    expect(withUpstreamRequestId(undefined, undefined)).toBeUndefined();
  });
});

describe("fromGeminiAnswer", () => {
  it("takes the header when sent, else the answer's responseId", () => {
    expect(fromGeminiAnswer({}, { responseId: "abcXYZ" })).toBe("abcXYZ");
    expect(fromGeminiAnswer({ "x-goog-request-id": "g1" }, { responseId: "abcXYZ" })).toBe("g1");
    expect(fromGeminiAnswer({}, { responseId: "a\r\nset-cookie: x" })).toBeUndefined();
    expect(fromGeminiAnswer({}, null)).toBeUndefined();
  });
});
