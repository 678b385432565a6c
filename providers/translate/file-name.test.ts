import { describe, expect, it } from "vitest";
import { chatFileName } from "./file-name.ts";

describe("chatFileName", () => {
  it("a title cut at 100 characters keeps an emoji whole (no lone UTF-16 surrogate in the name sent)", () => {
    const name = chatFileName("application/pdf", `${"a".repeat(99)}😀 tail`);
    expect(name).toBe(`${"a".repeat(99)}😀.pdf`);
  });

  it("a title of 101 emoji keeps 100 of them, each whole", () => {
    const name = chatFileName("application/pdf", "😀".repeat(101));
    expect(name).toBe(`${"😀".repeat(100)}.pdf`);
    expect(Buffer.from(name, "utf8").toString("utf8")).toBe(name);
  });
});
