import { describe, expect, it } from "vitest";
import { DownloadPool, projectShare } from "./download-pool.ts";
import { problems } from "../config/config.testkit.ts";

describe("the process's pool of media-URL bytes", () => {
  it("one project holds at most half of it; another project still has room; a caller with no project only the pool", () => {
    const pool = new DownloadPool();
    expect(projectShare(100)).toBe(50);
    expect(pool.take(50, 100, "alpha")).toBeUndefined();
    expect(pool.take(1, 100, "alpha")).toBe("project");
    expect(pool.take(40, 100, "beta")).toBeUndefined();
    expect(pool.take(20, 100)).toBe("pool");
    expect(pool.take(10, 100)).toBeUndefined();
    pool.giveBack(50, "alpha");
    expect(pool.heldBy("alpha")).toBe(0);
    expect(pool.take(50, 100, "alpha")).toBeUndefined();
    expect(pool.inFlight).toBe(100);
  });
});

describe("server.url_fetch.max_bytes_in_flight in check", () => {
  it("below 64 MiB (where half of it could not hold one request's 20 MiB, a 429 no retry could pass) is named", async () => {
    const yaml = (n: number) => `server:\n  url_fetch: { max_bytes_in_flight: ${n} }\n`;
    expect(await problems(yaml(64 * 1024 * 1024))).toEqual([]);
    expect(await problems(yaml(1024 * 1024))).toEqual([expect.stringMatching(/server\.url_fetch\.max_bytes_in_flight: must be >= 67108864$/)]);
  });
});
