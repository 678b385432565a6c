import { describe, expect, it } from "vitest";
import { REDACTED, SecretIndex, redactText, redactValue } from "./redact.ts";

const KEY = "sk-live-4f9c2a7e1b3d5f60a8c2e4b6d8f0a1c3";
const index = [new SecretIndex([KEY, "short123", "tiny"])];
const r = (s: string) => redactText(s, index);

describe("redactText", () => {
  it("masks a whole key, and one quoted after Bearer, in running text", () => {
    expect(r(`Incorrect API key provided: ${KEY}.`)).toBe(`Incorrect API key provided: ${REDACTED}.`);
    expect(r(`authorization: Bearer ${KEY}`)).toBe(`authorization: Bearer ${REDACTED}`);
  });

  it("masks partial echoes: a key cut at either end, down to 12 characters", () => {
    expect(r(`key ${KEY.slice(0, 20)}... is invalid`)).toBe(`key ${REDACTED}... is invalid`);
    expect(r(`key ...${KEY.slice(-12)} is invalid`)).toBe(`key ...${REDACTED} is invalid`);
    expect(r(`key ${KEY.slice(5, 16)}`)).toBe(`key ${KEY.slice(5, 16)}`); // 11 characters: a provider's own hint, kept
  });

  it("masks the URL-encoded and JSON-escaped forms of a key", () => {
    const odd = "aws/Secret+Key=\"quoted\"0123456789";
    const idx = [new SecretIndex([odd])];
    expect(redactText(`?token=${encodeURIComponent(odd)}&x=1`, idx)).not.toContain(encodeURIComponent(odd).slice(0, 12));
    const escaped = JSON.stringify({ k: odd });
    expect(redactText(escaped, idx)).toBe(`{"k":"${REDACTED}"}`);
    expect(redactText(escaped.replaceAll("/", "\\/"), idx)).toBe(`{"k":"${REDACTED}"}`);
  });

  it("masks short secrets only whole, and ignores values too short to be a key", () => {
    expect(r("value short123 here")).toBe(`value ${REDACTED} here`);
    expect(r("a tiny word")).toBe("a tiny word");
  });

  it("masks credential shapes it was never told about", () => {
    const idx: SecretIndex[] = [];
    expect(redactText("Authorization: Bearer ya29.unknownTokenValue123", idx)).toBe(`Authorization: Bearer ${REDACTED}`);
    expect(redactText('{"x-api-key":"unknown-key-abcdefgh"}', idx)).toBe(`{"x-api-key":"${REDACTED}"}`);
    expect(redactText("GET /v1/models?key=AIzaUnknownKey0001&alt=sse", idx)).toBe(`GET /v1/models?key=${REDACTED}&alt=sse`);
    expect(redactText("Credential=AKIAABCDEFGHIJKLMNOP/20250101/us-east-1", idx)).toBe(`Credential=${REDACTED}/20250101/us-east-1`);
    expect(redactText("Bearer token is missing", idx)).toBe("Bearer token is missing");
  });

  it("merges overlapping matches into one marker", () => {
    expect(r(`${KEY}${KEY}`)).toBe(REDACTED);
  });
});

describe("redactValue", () => {
  it("masks strings and keys in place, leaving untouched objects as they are", () => {
    const shared = { model: "m", status: 401 };
    const v: any = { error: { message: `bad ${KEY}`, headers: { [KEY]: 1 }, list: [KEY, 3] }, attempts: [shared] };
    const out = redactValue(v, index);
    expect(out).toBe(v);
    expect(JSON.stringify(v)).not.toContain(KEY.slice(0, 12));
    expect(v.error.list).toEqual([REDACTED, 3]);
    expect(v.attempts[0]).toBe(shared);
  });

  it("cuts a pathologically deep value instead of recursing into it", () => {
    let deep: any = KEY;
    for (let i = 0; i < 10_000; i++) deep = [deep];
    expect(JSON.stringify(redactValue(deep, index))).not.toContain(KEY);
  });
});
