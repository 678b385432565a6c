import { describe, expect, it } from "vitest";
import { maskedUrl } from "./masked-url.ts";

const MASK = "[REDACTED:SECRET]";

describe("a url the output rules changed", () => {
  it("unchanged, it is kept as it is", () => {
    expect(maskedUrl("https://x.example/a b", "https://x.example/a b")).toBe("https://x.example/a b");
  });

  it("changed in its path, query or fragment, it is kept with the mask percent-encoded, and parses", () => {
    for (const [url, masked, want] of [
      ["https://x.example/k/AKIAIOSFODNN7EXAMPLE/x", `https://x.example/k/${MASK}/x`, "https://x.example/k/%5BREDACTED:SECRET%5D/x"],
      ["https://x.example/?q=1&k=AKIAIOSFODNN7EXAMPLE", `https://x.example/?q=1&k=${MASK}`, "https://x.example/?q=1&k=%5BREDACTED:SECRET%5D"],
      ["https://x.example/p#AKIAIOSFODNN7EXAMPLE", `https://x.example/p#${MASK}`, "https://x.example/p#%5BREDACTED:SECRET%5D"],
      ["https://x.example/?to=%40[EMAIL_1]", "https://x.example/?to=%40bob smith@example.com", "https://x.example/?to=%40bob%20smith@example.com"],
    ]) {
      const out = maskedUrl(url!, masked!);
      expect(out).toBe(want);
      expect(new URL(out!).host).toBe("x.example");
    }
  });

  it("changed in its host, port or userinfo, none is given: the source cannot be shown without the secret", () => {
    expect(maskedUrl("https://AKIAIOSFODNN7EXAMPLE.example/x", `https://${MASK}.example/x`)).toBeUndefined();
    expect(maskedUrl("https://x.AKIAIOSFODNN7EXAMPLE/x", `https://x.${MASK}/x`)).toBeUndefined();
    expect(maskedUrl("https://u:AKIAIOSFODNN7EXAMPLE@x.example/", `https://u:${MASK}@x.example/`)).toBeUndefined();
    expect(maskedUrl("AKIAIOSFODNN7EXAMPLE", MASK)).toBeUndefined();
  });
});
