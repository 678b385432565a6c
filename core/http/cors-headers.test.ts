import { describe, expect, it } from "vitest";
import { CorsHeaders, EXPOSED_HEADERS } from "./cors-headers.ts";

describe("CORS request headers", () => {
  const headers = new CorsHeaders(["X-Team"]);

  it("echoes what each SDK's preflight asks for, every one accepted", () => {
    // What Chromium's preflight names for each SDK, as recorded (openai 6, @anthropic-ai/sdk 1, @google/genai 2).
    const openai = "authorization,content-type,x-stainless-arch,x-stainless-lang,x-stainless-os,x-stainless-package-version,x-stainless-retry-count,x-stainless-runtime,x-stainless-runtime-version";
    const anthropic = "anthropic-dangerous-direct-browser-access,anthropic-version,authorization,content-type,x-stainless-arch,x-stainless-lang,x-stainless-os,x-stainless-package-version,x-stainless-retry-count,x-stainless-runtime,x-stainless-runtime-version,x-stainless-timeout";
    const genai = "content-type,x-goog-api-client,x-goog-api-key";
    const mcp = "authorization,content-type,mcp-protocol-version,mcp-session-id,last-event-id";
    for (const asked of [openai, anthropic, genai, mcp]) expect(headers.allow(asked)).toBe(asked.split(",").join(", "));
    expect(headers.allow("Idempotency-Key, X-MG-Idempotency-Key, traceparent, openai-project, x-request-id")).toBe("idempotency-key, x-mg-idempotency-key, traceparent, openai-project, x-request-id");
  });

  it("accepts the operator's allow_headers, in any case", () => {
    expect(headers.allow("x-team,authorization")).toBe("x-team, authorization");
  });

  it("a header not accepted: the accepted list, without it, so the browser refuses the call and names it", () => {
    const answer = headers.allow("authorization,x-unknown-thing")!;
    expect(answer.split(", ")).toContain("authorization");
    expect(answer.split(", ")).toContain("x-team");
    expect(answer.split(", ")).not.toContain("x-unknown-thing");
  });

  it("nothing asked: no Allow-Headers", () => {
    expect(headers.allow(undefined)).toBeUndefined();
    expect(headers.allow(" , ")).toBeUndefined();
  });

  it("exposes every header, and by name those clients act on", () => {
    const names = EXPOSED_HEADERS.split(", ");
    expect(names[0]).toBe("*");
    for (const h of ["x-request-id", "request-id", "retry-after", "retry-after-ms", "x-should-retry", "x-ratelimit-remaining-tokens", "mcp-session-id", "x-mg-generation-id"]) expect(names).toContain(h);
  });
});
