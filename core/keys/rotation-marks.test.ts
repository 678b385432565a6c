import { describe, expect, it } from "vitest";
import { parseDocument } from "yaml";
import { noteOnProjectKey, yamlKeys } from "./yaml-edit.ts";
import { rotationMarks, rotationNote } from "./rotation-marks.ts";

const A = "a".repeat(64);
const FILE = `projects:
  acme:
    keys:
      - { id: k1, sha256: "${A}" }  # the CI key
      - id: k2
        sha256: "${A}"
      - { id: "odd id", sha256: "${A}" }
  flowy:
    keys: [{ id: f1, sha256: "${A}" }, { id: f2, sha256: "${A}" }]
`;

describe("the rotation chain in comments", () => {
  it("is noted at the end of the entry's line, after a comment already there, every other byte kept", () => {
    let out = noteOnProjectKey(FILE, "acme", "k1", rotationNote("to", "k2"));
    out = noteOnProjectKey(out, "acme", "k2", rotationNote("from", "k1"));
    out = noteOnProjectKey(out, "acme", "k2", rotationNote("to", "odd id"));
    expect(out).toBe(FILE
      .replace("  # the CI key", "  # the CI key; rotated to k2")
      .replace("      - id: k2\n", "      - id: k2  # rotated from k1; rotated to \"odd id\"\n"));
    expect(yamlKeys(out).filter((k) => k.project === "acme").map((k) => [k.id, k.replaced_by, k.rotated_from])).toEqual([
      ["k1", "k2", undefined], ["k2", "odd id", "k1"], ["odd id", undefined, undefined],
    ]);
  });

  it("is not written in a flow list of keys, where one line holds several entries", () => {
    expect(noteOnProjectKey(FILE, "flowy", "f1", rotationNote("to", "f2"))).toBe(FILE);
  });

  it("reads only a note naming a key of the project, and a field wins over a note", () => {
    const text = `projects:
  acme:
    keys:
      - { id: k1, sha256: "${A}" }  # rotated to the vault, see the runbook
      - { id: k2, sha256: "${A}", replaced_by: k9 }  # rotated to k1
      - { id: k9, sha256: "${A}" }
`;
    expect(rotationMarks(parseDocument(text)).get("acme")?.has("k1")).toBe(false);
    expect(yamlKeys(text).map((k) => [k.id, k.replaced_by])).toEqual([["k1", undefined], ["k2", "k9"], ["k9", undefined]]);
  });
});
