// The scrapes that read this process's counts, so a shutdown can keep the metrics listener until one more has read
// the counts its drain made (core/shutdown.ts): a pull-based scrape sees nothing counted after the last one before exit.
// One scrape is one event here, whichever path read the counts: this process's own answer, or (a worker of
// `start --workers N`) its part of the cluster's sum sent to the primary — never both, which made the gather's
// few milliseconds look like the scrape interval.
import { performance } from "node:perf_hooks";

/** Slack over the scrape interval seen: a scraper's clock and the scrape's own time. */
const SLACK_MS = 1000;
/** How many recent intervals are kept: the longest (seen twice) is waited for, so a second scraper's or a curl's short gap does not shorten it. */
const INTERVALS_KEPT = 8;
/** Two intervals within this factor of each other are the same one (a scraper's jitter). */
const SAME_INTERVAL = 1.5;

/**
 * The scrape interval `gaps` show: the longest one seen twice (another gap within SAME_INTERVAL of it). A missed or
 * failed scrape makes one gap of two intervals, seen once, which would otherwise have doubled the wait past the bound
 * README states; an HA pair's long gap comes every cycle. With no gap seen twice (a short history), the longest.
 */
export function scrapeInterval(gaps: readonly number[]): number {
  const desc = [...gaps].sort((a, b) => b - a);
  for (let i = 0; i + 1 < desc.length; i++) if (desc[i + 1] * SAME_INTERVAL >= desc[i]) return desc[i];
  return desc[0];
}

export class ScrapeWatch {
  private last?: number;
  /** The gaps between the recent scrapes, oldest first. */
  private readonly intervals: number[] = [];
  /** What the last scrape read of the counter given to reading(), and how to read it now. */
  private countedAtLast?: number;
  private counted?: () => number;
  /** Scrapes being answered on this process's listener (a cluster worker's waits for the primary's sum). */
  private inProgress = 0;
  private readonly waiters = new Set<() => void>();

  /** `clock`: milliseconds, monotonic (tests give their own). */
  constructor(private readonly clock: () => number = () => performance.now()) {}

  /**
   * The counts are being read for a scrape; `counted` says how much has been counted so far (it only grows). The
   * function returned says that reading reached the scraper (the answer sent, or a worker's part delivered).
   */
  reading(counted: () => number): () => void {
    this.counted = counted;
    const at = counted();
    let sent = false;
    return () => {
      if (sent) return;
      sent = true;
      this.note(at);
    };
  }

  private note(countedAt: number): void {
    const now = this.clock();
    if (this.last !== undefined) {
      this.intervals.push(now - this.last);
      if (this.intervals.length > INTERVALS_KEPT) this.intervals.shift();
    }
    this.last = now;
    this.countedAtLast = countedAt;
    for (const w of [...this.waiters]) w();
  }

  /**
   * A scrape reached this process's listener; the function returned says it is over (sent, or its connection gone).
   * A wait for the next scrape ends only once none is in progress: closing the listener would cut one mid-answer.
   */
  answering(): () => void {
    this.inProgress++;
    let over = false;
    return () => {
      if (over) return;
      over = true;
      this.inProgress--;
      for (const w of [...this.waiters]) w();
    };
  }

  /**
   * How long one more scrape may take to come: the scrape interval the recent gaps show (scrapeInterval: the longest
   * seen twice; at most `maxIntervalMs`) and a second. Undefined when no interval has been seen (scraped once or never: a readiness curl, not a scraper), or when
   * nothing has been counted since the last scrape read the counts (it has them all already).
   */
  nextWithinMs(maxIntervalMs: number): number | undefined {
    if (!this.intervals.length) return undefined;
    if (this.counted && this.counted() === this.countedAtLast) return undefined;
    return Math.min(scrapeInterval(this.intervals), maxIntervalMs) + SLACK_MS;
  }

  /**
   * Resolves true once a scrape has read the counts and none is still in progress here; false when that did not
   * happen within `ms`.
   */
  next(ms: number): Promise<boolean> {
    const since = this.last;
    return new Promise((resolve) => {
      const done = (got: boolean) => {
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve(got);
      };
      const check = () => {
        if (this.last !== since && this.inProgress === 0) done(true);
      };
      const timer = setTimeout(() => done(false), ms);
      this.waiters.add(check);
    });
  }
}
