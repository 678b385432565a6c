import { describe, expect, it } from "vitest";
import { lineageOf, rotatedAlready } from "./key-lineage.ts";

describe("a rotated key in the Keys view", () => {
  it("the old key says what replaced it and offers no second rotation; the new key says what it replaced", () => {
    const old = { replaced_by: "ui-1-r2", rotated_from: null };
    expect(lineageOf(old)).toBe("rotated to ui-1-r2");
    expect(rotatedAlready(old)).toBe("Already rotated to ui-1-r2: rotate ui-1-r2 instead");
    const successor = { replaced_by: null, rotated_from: "ui-1" };
    expect(lineageOf(successor)).toBe("rotated from ui-1");
    expect(rotatedAlready(successor)).toBeUndefined();
    // A key rotated twice in a row sits in the middle of the chain.
    expect(lineageOf({ replaced_by: "ui-1-r3", rotated_from: "ui-1" })).toBe("rotated to ui-1-r3, rotated from ui-1");
    expect(lineageOf({ replaced_by: null, rotated_from: null })).toBe("");
  });
});
