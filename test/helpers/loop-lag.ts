// How long the event loop was held up while a test waited on a timer: on a loaded machine (test files side by side
// on two cores) a timer fires that much late, through no fault of the code under test.
import { monitorEventLoopDelay } from "node:perf_hooks";

const LOOK_MS = 10;

/**
 * Starts measuring; the function it returns stops and gives the ms the loop was held up meanwhile (each look is due
 * every 10 ms, and what it came late adds up). An upper bound on a timer's lateness is a margin for the scheduler
 * plus this: on an idle machine that is a few ms, so a timer a real fraction of a second late still fails.
 */
export function loopLag(): () => Promise<number> {
  const delay = monitorEventLoopDelay({ resolution: LOOK_MS });
  delay.enable();
  return async () => {
    await new Promise((r) => setTimeout(r, 2 * LOOK_MS + 5)); // the monitor's look, due before this, records a delay that ended just now
    delay.disable();
    if (delay.count === 0) return 0;
    return Math.max(0, ((delay.mean - LOOK_MS * 1e6) * delay.count) / 1e6); // each sample is one look's interval, in ns
  };
}
