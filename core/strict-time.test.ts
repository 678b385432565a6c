// Times typed by an operator mean the same on every machine: UTC unless they carry an offset, and only real dates.
// The process runs in New York here, where Date.parse read "2026-12-01T00:00:00" as 05:00Z.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { parseStrictTime } from "./strict-time.ts";
import { timeParam } from "./admin/query.ts";
import { parseRange, parseSince } from "./store/usage-command.ts";
import { keysCommand } from "./keys/keys-command.ts";

const TZ = process.env.TZ;
beforeAll(() => { process.env.TZ = "America/New_York"; });
afterAll(() => { if (TZ === undefined) delete process.env.TZ; else process.env.TZ = TZ; });

const q = (s: string) => new URLSearchParams(s);
const DEC1 = Date.UTC(2026, 11, 1);

describe("parseStrictTime", () => {
  it("reads ISO 8601 in UTC unless an offset is given", () => {
    expect(new Date(2026, 11, 1).getTimezoneOffset()).toBe(300); // the zone really is New York
    expect(parseStrictTime("2026-12-01")).toEqual({ ok: true, ms: DEC1 });
    expect(parseStrictTime("2026-12-01T00:00:00")).toEqual({ ok: true, ms: DEC1 });
    expect(parseStrictTime("2026-12-01T00:00")).toEqual({ ok: true, ms: DEC1 });
    expect(parseStrictTime("2026-12-01 00:00:00.250")).toEqual({ ok: true, ms: DEC1 + 250 });
    expect(parseStrictTime("2026-12-01T00:00:00Z")).toEqual({ ok: true, ms: DEC1 });
    expect(parseStrictTime("2026-12-01T02:30:00+02:30")).toEqual({ ok: true, ms: DEC1 });
    expect(parseStrictTime("2026-11-30T19:00:00-0500")).toEqual({ ok: true, ms: DEC1 });
  });

  it("refuses dates and times that do not exist instead of rolling them over", () => {
    expect(parseStrictTime("2026-11-31")).toEqual({ ok: false, why: "no such date (2026-11-31)" });
    expect(parseStrictTime("2030-02-30T00:00:00Z")).toEqual({ ok: false, why: "no such date (2030-02-30)" });
    expect(parseStrictTime("2028-02-29").ok).toBe(true); // a leap year
    expect(parseStrictTime("2026-12-01T24:00:00Z").ok).toBe(false);
    expect(parseStrictTime("2026-12-01T12:60Z").ok).toBe(false);
    for (const s of ["Dec 1 2026", "2026-12", "2026-12-01T", "20261201", "2026-12-01T00:00:00+25:00"]) expect(parseStrictTime(s).ok, s).toBe(false);
  });
});

describe("where operators type times", () => {
  it("admin API: since/until without an offset are UTC; an impossible date is a 400 naming the parameter", () => {
    expect(timeParam(q("since=2026-12-01T00:00:00"), "since")).toBe(DEC1);
    expect(timeParam(q("until=2026-12-01"), "until")).toBe(DEC1);
    expect(timeParam(q("since=24h"), "since", DEC1)).toBe(DEC1 - 86_400_000);
    let err: any;
    try {
      timeParam(q("since=2026-11-31"), "since");
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({ status: 400, details: { field: "since" } });
    expect(err.message).toBe('Invalid query parameter since: "2026-11-31" is no such date (2026-11-31)');
  });

  it("usage --since/--until: UTC without an offset; an impossible date names the flag", () => {
    expect(parseSince("2026-12-01T00:00:00")).toBe(DEC1);
    expect(parseRange("2026-12-01T00:00:00", "2026-12-01T01:00:00", DEC1)).toEqual({ since: DEC1, until: DEC1 + 3_600_000 });
    expect(() => parseSince("2026-11-31")).toThrow("--since 2026-11-31: no such date (2026-11-31)");
    expect(() => parseRange("2026-11-01", "2026-11-31", DEC1)).toThrow("--until 2026-11-31: no such date (2026-11-31)");
  });

  it("keys new --expires: written as the UTC time typed; an impossible date is refused", async () => {
    let out = "", err = "";
    const o = vi.spyOn(process.stdout, "write").mockImplementation((s) => ((out += String(s)), true));
    const e = vi.spyOn(process.stderr, "write").mockImplementation((s) => ((err += String(s)), true));
    try {
      expect(await keysCommand(["new", "--project", "acme", "--id", "ci", "--expires", "2030-01-01T00:00:00"])).toBe(0);
      expect(out).toContain('expires_at: "2030-01-01T00:00:00Z"');
      expect(await keysCommand(["new", "--project", "acme", "--id", "ci", "--expires", "2030-02-30"])).toBe(2); // a bad option value: a usage error (952c799)
      expect(err).toContain("--expires 2030-02-30 is not a date: no such date (2030-02-30)");
    } finally {
      o.mockRestore();
      e.mockRestore();
    }
  });
});
