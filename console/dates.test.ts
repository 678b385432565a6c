import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { expiryMeaning, expiryOf, utcDay, whenUtc, zoneOffset } from "./dates.ts";

describe("console dates: days are UTC days, said so; moments in the browser's time", () => {
  let tz: string | undefined;
  beforeEach(() => {
    tz = process.env.TZ;
    process.env.TZ = "America/Los_Angeles";
  });
  afterEach(() => {
    if (tz === undefined) delete process.env.TZ;
    else process.env.TZ = tz;
  });

  it("a UTC day is its UTC date wherever the browser is (00:00 UTC is the day before in Los Angeles)", () => {
    expect(utcDay("2026-11-27T00:00:00.000Z")).toBe("2026-11-27");
    expect(utcDay(Date.parse("2026-11-27T23:59:59.999Z"))).toBe("2026-11-27");
    expect(whenUtc("2026-11-27T08:30:00.000Z")).toBe("2026-11-27 08:30 UTC");
  });

  it("an expiry date is the start of that UTC day, as the CLI takes it, and the form says when that is locally", () => {
    expect(expiryOf("2027-01-15")).toBe("2027-01-15T00:00:00.000Z");
    expect(Date.parse(expiryOf("2027-01-15"))).toBe(Date.parse("2027-01-15"));
    expect(expiryMeaning("2027-01-15")).toBe("stops working at 2027-01-15 00:00 UTC (2027-01-14 16:00 your time)");
    // Summer time: seven hours behind.
    expect(expiryMeaning("2027-07-15")).toBe("stops working at 2027-07-15 00:00 UTC (2027-07-14 17:00 your time)");
  });

  it("names the browser's offset from UTC", () => {
    expect(zoneOffset("2027-01-15T00:00:00Z")).toBe("UTC−08:00");
    expect(zoneOffset("2027-07-15T00:00:00Z")).toBe("UTC−07:00");
    process.env.TZ = "Asia/Kolkata";
    expect(zoneOffset("2027-01-15T00:00:00Z")).toBe("UTC+05:30");
    process.env.TZ = "UTC";
    expect(zoneOffset("2027-01-15T00:00:00Z")).toBe("UTC");
  });
});
