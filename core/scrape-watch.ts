// The scrapes this process's /metrics answered, so a shutdown can keep the listener until one more has read the
// counts its drain made (core/shutdown.ts): a pull-based scrape sees nothing counted after the last one before exit.
import { performance } from "node:perf_hooks";

/** How long one more scrape may take when only one was seen (no interval known yet). */
const UNKNOWN_INTERVAL_MS = 4000;
/** Slack over the scrape interval seen: a scraper's clock and the scrape's own time. */
const SLACK_MS = 1000;

export class ScrapeWatch {
  private last?: number;
  private interval?: number;
  /** Scrapes being answered on this process's listener (a cluster worker's waits for the primary's sum). */
  private inProgress = 0;
  private readonly waiters = new Set<() => void>();

  /**
   * A scrape was answered — or, in a worker of `start --workers N`, this worker's counts went to the primary for one
   * (core/cluster.ts): either way what it counted so far has reached a scraper.
   */
  note(now = performance.now()): void {
    if (this.last !== undefined) this.interval = now - this.last;
    this.last = now;
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

  /** Whether anything has scraped this process (a gateway nobody scrapes has nothing to wait for). */
  get scraped(): boolean {
    return this.last !== undefined;
  }

  /** How long the next scrape may take to come: the interval between the last two, and a second. */
  nextWithinMs(): number {
    return (this.interval ?? UNKNOWN_INTERVAL_MS) + SLACK_MS;
  }

  /**
   * Resolves true once a scrape has been answered (or this worker's counts sent for one) and none is still in
   * progress here; false when that did not happen within `ms`.
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
