import { describe, expect, it } from "vitest";
import { validateHeaderName, validateHeaderValue } from "node:http";
import { invalidHeaders } from "./header-validity.ts";

const nodeRefuses = (name: string, value: string) => {
  try {
    validateHeaderName(name);
    validateHeaderValue(name, value);
    return false;
  } catch {
    return true;
  }
};

describe("invalidHeaders", () => {
  it("names exactly the headers Node's writeHead refuses", () => {
    const headers: Record<string, string> = {
      "x-ok": "plain value", "x-latin1": "café", "x-tab": "a\tb", "x-newline": "a\nb", "x-emoji": "user 🙂",
      "bad header": "v", "x-nul": "a\u0000b", "": "v", "x-del": "a\u007fb",
    };
    expect(invalidHeaders(headers)).toEqual(Object.keys(headers).filter((n) => nodeRefuses(n, headers[n]!)));
    expect(invalidHeaders(headers)).toEqual(["x-newline", "x-emoji", "bad header", "x-nul", "", "x-del"]);
  });

  it("is undefined for headers Node takes, arrays included", () => {
    expect(invalidHeaders({ "x-a": "1", "set-cookie": ["a=1", "b=2"] as unknown as string })).toBeUndefined();
    expect(invalidHeaders({})).toBeUndefined();
    expect(invalidHeaders(undefined)).toBeUndefined();
  });
});
