import { describe, expect, it } from "vitest";
import { compileAllowlist } from "./glob.ts";

describe("allowlist globs", () => {
  it("`*` matches any run of characters, line breaks included: an id with CR/LF is still covered by *", () => {
    const all = compileAllowlist(["*"]);
    for (const id of ["openai/gpt-4o\r\nX-Injected: 1", "a\nb", "x\u2028y", ""]) expect(all(id), JSON.stringify(id)).toBe(true);
    expect(compileAllowlist(["openai/*"])("openai/gpt-4o\n")).toBe(true);
    expect(compileAllowlist(["openai/*"])("anthropic/x\nopenai/y")).toBe(false); // anchored at both ends
  });

  it("`?` matches exactly one character, a line break too", () => {
    const m = compileAllowlist(["a?b"]);
    expect(["a\nb", "a\rb", "axb"].map(m)).toEqual([true, true, true]);
    expect(["ab", "a\r\nb"].map(m)).toEqual([false, false]);
  });
});
