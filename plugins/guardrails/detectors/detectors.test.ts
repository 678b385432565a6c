import { describe, expect, it } from "vitest";
import { DETECTORS, detectorsFor, findAll, type DetectorKind, type Span } from "./index.ts";
import { NEGATIVES, POSITIVES } from "./corpus.ts";

const ALL = Object.keys(DETECTORS) as DetectorKind[];

function found(text: string, kinds: DetectorKind[] = ALL): Array<[string, string]> {
  const spans: Span[] = [];
  for (const d of detectorsFor(kinds)) findAll(d, text, spans);
  return spans.map((s) => [s.label, text.slice(s.start, s.end)]);
}

describe("built-in detectors", () => {
  it.each(POSITIVES.map((s) => [s.text.slice(0, 40), s] as const))("find every value in %j", (_name, sample) => {
    for (const [kind, value] of sample.find) {
      const got = found(sample.text, [kind]).map(([, v]) => v);
      expect(got).toContain(value);
    }
  });

  it("finds only the value of an assigned secret, and only when it looks random", () => {
    expect(found("DB_PASSWORD=hG7kL2mQ9xV4bN8pZ3", ["secret"])).toEqual([["SECRET", "hG7kL2mQ9xV4bN8pZ3"]]);
    expect(found("password: correcthorsebattery", ["secret"])).toEqual([]);
  });

  it.each(NEGATIVES.map((t) => [t] as const))("report nothing in look-alike text %j", (text) => {
    expect(found(text)).toEqual([]);
  });

  it("a failed check digit is what keeps a number out", () => {
    expect(found("4111 1111 1111 1111", ["card"])).toHaveLength(1);
    expect(found("4111 1111 1111 1112", ["card"])).toHaveLength(0);
    expect(found("GB82WEST12345698765432", ["iban"])).toHaveLength(1);
    expect(found("GB83WEST12345698765432", ["iban"])).toHaveLength(0);
  });
});
