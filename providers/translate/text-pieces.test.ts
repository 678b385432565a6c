import { describe, expect, it } from "vitest";
import { TextPieces } from "./text-pieces.ts";

describe("TextPieces", () => {
  it("is the text appended, across blocks, read any number of times and appended to after a read", () => {
    const t = new TextPieces();
    expect(t.toString()).toBe("");
    let want = "";
    for (let i = 0; i < 1000; i++) {
      t.append(`${i},`);
      want += `${i},`;
      if (i === 300) expect(t.toString()).toBe(want);
    }
    expect(t.length).toBe(want.length);
    expect(t.toString()).toBe(want);
    expect(t.toString()).toBe(want);
    t.append("end");
    expect(t.toString()).toBe(`${want}end`);
  });
});
