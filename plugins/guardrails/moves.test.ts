import { describe, expect, it } from "vitest";
import { EditLog, TextMoves, citedOutput } from "./moves.ts";
import { runFor } from "./testkit.ts";

describe("positions moved through the guardrails' edits", () => {
  it("before, after and inside a replaced span (a start to its start, an end to its end)", () => {
    const log = new EditLog();
    log.add(5, 14, 25); // "[EMAIL_1]" (9) -> a 25-character value
    log.add(20, 30, 4);
    expect([log.move(3, false), log.move(5, false), log.move(14, true), log.move(16, false)]).toEqual([3, 5, 30, 32]);
    expect([log.move(7, false), log.move(7, true)]).toEqual([5, 30]);
    expect([log.move(25, false), log.move(25, true), log.move(31, true)]).toEqual([36, 40, 41]);
  });

  it("never past the client's text", () => {
    expect(new TextMoves().move(50, true, 10)).toBe(10);
  });

  it("a JSON answer's annotations follow its placeholders restored and its secrets masked", () => {
    const run = runFor({ rules: [{ name: "pii", detect: ["email"], action: "redact" }, { name: "sec", detect: ["secret"], on: ["output"], action: "redact" }] });
    run.input("bob.smith@example.com", false);
    const text = "Write to [EMAIL_1]. Key AKIAIOSFODNN7EXAMPLE here.";
    const cite = (s: string, from = 0, to = s.length) => ({ type: "url_citation", url_citation: { start_index: text.indexOf(s) + from, end_index: text.indexOf(s) + to, url: "u", title: "" } });
    const annotations = [cite("Key AKIAIOSFODNN7EXAMPLE here."), cite("AKIAIOSFODNN7EXAMPLE", 4, 12)];
    const out = citedOutput(text, annotations, (t, moves) => run.output(t, moves));
    expect(out).toBe("Write to bob.smith@example.com. Key [REDACTED:SECRET] here.");
    const span = (a: any) => out.slice(a.url_citation.start_index, a.url_citation.end_index);
    expect(annotations.map(span)).toEqual(["Key [REDACTED:SECRET] here.", "[REDACTED:SECRET]"]);
  });
});
