import { describe, expect, it } from "vitest";
import { decodeBase64Strict } from "./strict-base64.ts";

describe("decodeBase64Strict", () => {
  it("decodes padded, unpadded and URL-safe base64", () => {
    expect(decodeBase64Strict("aGk=")?.toString()).toBe("hi");
    expect(decodeBase64Strict("aGk")?.toString()).toBe("hi");
    expect(decodeBase64Strict("_-8")).toEqual(Buffer.from([0xff, 0xef]));
  });
  it("refuses what Buffer.from would half-read: junk characters, a stray length, nothing", () => {
    expect(Buffer.from("!!!notbase64!!!", "base64").length).toBeGreaterThan(0); // what was served before
    expect(decodeBase64Strict("!!!notbase64!!!")).toBeUndefined();
    expect(decodeBase64Strict("abcde")).toBeUndefined();
    expect(decodeBase64Strict("ab=c")).toBeUndefined();
    expect(decodeBase64Strict("")).toBeUndefined();
  });
});
