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
