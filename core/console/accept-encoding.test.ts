import { describe, expect, it } from "vitest";
import { acceptsGzip } from "./accept-encoding.ts";

describe("Accept-Encoding for the console's assets", () => {
  it("takes gzip when it is named or covered by *, with a q-value above 0", () => {
    expect(acceptsGzip("gzip, deflate, br")).toBe(true);
    expect(acceptsGzip("br;q=1.0, GZIP;q=0.5")).toBe(true);
    expect(acceptsGzip("*")).toBe(true);
    expect(acceptsGzip("x-gzip")).toBe(true);
    expect(acceptsGzip(["deflate", "gzip"])).toBe(true);
  });

  it("refuses gzip with q=0, a * with q=0, or a header that names neither", () => {
    expect(acceptsGzip("gzip;q=0")).toBe(false);
    expect(acceptsGzip("gzip; q=0.000, identity")).toBe(false);
    expect(acceptsGzip("*;q=0, identity")).toBe(false);
    // gzip named with q=0 is refused even when * would take it.
    expect(acceptsGzip("gzip;q=0, *")).toBe(false);
    expect(acceptsGzip("identity")).toBe(false);
    expect(acceptsGzip("")).toBe(false);
    expect(acceptsGzip(undefined)).toBe(false);
    // Not a coding name, only a word that contains it.
    expect(acceptsGzip("x-gzipped")).toBe(false);
  });

  it("ignores an entry whose q-value is not one", () => {
    expect(acceptsGzip("gzip;q=2")).toBe(false);
    expect(acceptsGzip("gzip;q=abc, *;q=0.1")).toBe(true);
  });
});
