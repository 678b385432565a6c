import { describe, expect, it } from "vitest";
import { otlpTarget } from "./otlp-target.ts";

describe("otlpTarget: OTEL_EXPORTER_OTLP_HEADERS", () => {
  const env = (headers: string) => ({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318", OTEL_EXPORTER_OTLP_HEADERS: headers });

  it("decodes URL-encoded keys and values", () => {
    expect(otlpTarget(undefined, env("x-tenant=a%20b, authorization=Bearer%20t0k"))?.headers).toEqual({ "x-tenant": "a b", authorization: "Bearer t0k" });
  });

  it("a value with a % that starts no escape is kept as written, not a crash at start (it threw URIError)", () => {
    expect(otlpTarget(undefined, env("authorization=Bearer 50%off,x-k%zz=1"))?.headers).toEqual({ authorization: "Bearer 50%off", "x-k%zz": "1" });
  });
});
