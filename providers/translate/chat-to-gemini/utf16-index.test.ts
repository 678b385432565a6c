import { describe, expect, it } from "vitest";
import { Utf16Index } from "./utf16-index.ts";

describe("UTF-8 byte offsets -> UTF-16 indexes of a text that comes in pieces", () => {
  it("each byte offset of every character boundary lands where the joined text says, across pieces and checkpoints", () => {
    const pieces = ["Il fait “beau” à Paris. ", "😀".repeat(40), " é".repeat(70), "", "x".repeat(200), "日本語"];
    const index = new Utf16Index();
    for (const p of pieces) index.append(p);
    const text = pieces.join("");
    for (let i = 0; i <= text.length; i++) {
      if (i > 0 && text.charCodeAt(i - 1) >= 0xd800 && text.charCodeAt(i - 1) < 0xdc00) continue; // inside a pair
      expect(index.at(Buffer.byteLength(text.slice(0, i)))).toBe(i);
    }
    expect(index.at(Buffer.byteLength(text) + 9)).toBe(text.length);
    // A byte inside a character counts from after it ("“" is 3 bytes).
    expect(index.at(9)).toBe(9);
  });
});
