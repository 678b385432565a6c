import { describe, expect, it } from "vitest";
import { claudeStopSequences, stopList } from "./claude-stop-sequences.ts";

describe("stop sequences Claude takes", () => {
  it("a blank stop (empty or whitespace only) is left out and stop named; the others are kept", () => {
    const dropped: string[] = [];
    expect(claudeStopSequences(["\n", "END", "", " \t"], dropped)).toEqual(["END"]);
    expect(dropped).toEqual(["stop"]);
  });

  it("a lone blank stop leaves none to send", () => {
    const dropped: string[] = [];
    expect(claudeStopSequences("\n", dropped)).toBeUndefined();
    expect(dropped).toEqual(["stop"]);
  });

  it("stops with text are sent as they are, nothing named", () => {
    const dropped: string[] = [];
    expect(claudeStopSequences("END", dropped)).toEqual(["END"]);
    expect(claudeStopSequences([" END\n"], dropped)).toEqual([" END\n"]);
    expect(claudeStopSequences(undefined, dropped)).toBeUndefined();
    expect(dropped).toEqual([]);
    expect(stopList(null)).toBeUndefined();
  });
});
