// When a shutdown waits for one more scrape (core/shutdown.ts): only for a scraper (an interval seen), only when
// something was counted since the last scrape read the counts, and for the longest recent interval, so a second
// scraper's (an HA Prometheus pair's) or a curl's short gap does not end the wait before the real scraper comes.
import { describe, expect, it } from "vitest";
import { ScrapeWatch } from "./scrape-watch.ts";

/** A watch fed scrapes at the given times (ms), each reading `counted`'s value then. */
function scrapedAt(times: number[], counted: { n: number }): ScrapeWatch {
  let now = 0;
  const w = new ScrapeWatch(() => now);
  for (const t of times) {
    now = t;
    w.reading(() => counted.n)();
  }
  return w;
}

describe("ScrapeWatch.nextWithinMs", () => {
  it("does not wait for one scrape (a readiness curl), nor when nothing was counted since the last scrape", () => {
    const counted = { n: 0 };
    expect(scrapedAt([1000], counted).nextWithinMs(30_000)).toBeUndefined();
    counted.n = 1; // counted after the one scrape: still no scraper seen
    expect(scrapedAt([1000], counted).nextWithinMs(30_000)).toBeUndefined();
    const idle = scrapedAt([0, 15_000], counted);
    expect(idle.nextWithinMs(30_000)).toBeUndefined(); // the last scrape read everything counted
    counted.n = 2;
    expect(idle.nextWithinMs(30_000)).toBe(16_000);
  });

  it("waits for the longest recent interval: a second scraper 500 ms after the first does not shorten it", () => {
    const counted = { n: 0 };
    const w = scrapedAt([0, 500, 15_000, 15_500, 30_000, 30_400], counted);
    counted.n = 1;
    expect(w.nextWithinMs(60_000)).toBe(15_500); // 14.5 s, the longest gap, and a second
    expect(w.nextWithinMs(5000)).toBe(6000); // bounded by the caller (the grace period)
  });

  it("a missed scrape (one gap of 30 s among 15 s ones) does not double the wait: the 15 s scraper is waited for", () => {
    const counted = { n: 0 };
    const w = scrapedAt([0, 15_000, 30_000, 60_000, 75_000, 90_100], counted);
    counted.n = 1;
    expect(w.nextWithinMs(60_000)).toBe(16_100); // 15.1 s, the longest gap seen twice, and a second; not 31 s
  });

  it("an HA pair's long gap, which comes every cycle, is still waited for when one of the pair missed a scrape", () => {
    const counted = { n: 0 };
    // Scrapers at 0 and +500 ms every 15 s; the second missed its scrape at 30.5 s (a gap of 29.5 s, seen once).
    const w = scrapedAt([0, 500, 15_000, 15_500, 30_000, 59_500, 60_000, 60_400], counted);
    counted.n = 1;
    expect(w.nextWithinMs(60_000)).toBe(15_500);
  });

  it("with no gap seen twice yet, waits for the longest", () => {
    const counted = { n: 0 };
    const w = scrapedAt([0, 15_000, 45_000], counted);
    counted.n = 1;
    expect(w.nextWithinMs(60_000)).toBe(31_000);
  });

  it("counts one scrape once, however many times its reading says it was sent", () => {
    const counted = { n: 0 };
    let now = 0;
    const w = new ScrapeWatch(() => now);
    const sent = w.reading(() => counted.n);
    sent();
    now = 10;
    sent();
    counted.n = 1;
    expect(w.nextWithinMs(30_000)).toBeUndefined(); // still one scrape: no 10 ms "interval"
  });
});
