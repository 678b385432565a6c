// Which callers' traceparent headers an access line takes its trace id from (tracing off): the W3C rules, so an
// invalid header starts a new trace instead of joining every caller that sends the same bad value.
import { describe, expect, it } from "vitest";
import { traceIdOfHeader } from "./traceparent.ts";

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT = "00f067aa0ba902b7";

describe("traceIdOfHeader", () => {
  it("a valid version-00 header: its trace id, whatever the flags", () => {
    expect(traceIdOfHeader(`00-${TRACE}-${PARENT}-01`)).toBe(TRACE);
    expect(traceIdOfHeader(`00-${TRACE}-${PARENT}-00`)).toBe(TRACE);
  });

  it("an all-zero trace id or parent id: ignored", () => {
    expect(traceIdOfHeader(`00-${"0".repeat(32)}-${PARENT}-01`)).toBeUndefined();
    expect(traceIdOfHeader(`00-${TRACE}-${"0".repeat(16)}-01`)).toBeUndefined();
  });

  it("version ff: ignored", () => {
    expect(traceIdOfHeader(`ff-${TRACE}-${PARENT}-01`)).toBeUndefined();
  });

  it("upper-case hex, a short field, a non-hex flag: ignored", () => {
    expect(traceIdOfHeader(`00-${TRACE.toUpperCase()}-${PARENT}-01`)).toBeUndefined();
    expect(traceIdOfHeader(`00-${TRACE.slice(1)}-${PARENT}-01`)).toBeUndefined();
    expect(traceIdOfHeader(`00-${TRACE}-${PARENT}-0g`)).toBeUndefined();
  });

  it("version 00 with anything after the flags (two headers joined by Node): ignored", () => {
    expect(traceIdOfHeader(`00-${TRACE}-${PARENT}-01-extra`)).toBeUndefined();
    expect(traceIdOfHeader(`00-${TRACE}-${PARENT}-01, 00-${TRACE}-${PARENT}-01`)).toBeUndefined();
  });

  it("a later version: its first four fields read, further ones after a dash allowed", () => {
    expect(traceIdOfHeader(`01-${TRACE}-${PARENT}-01`)).toBe(TRACE);
    expect(traceIdOfHeader(`01-${TRACE}-${PARENT}-01-future`)).toBe(TRACE);
    expect(traceIdOfHeader(`01-${TRACE}-${PARENT}-01x`)).toBeUndefined();
  });

  it("no header, or several as an array: none", () => {
    expect(traceIdOfHeader(undefined)).toBeUndefined();
    expect(traceIdOfHeader([`00-${TRACE}-${PARENT}-01`])).toBeUndefined();
  });
});
