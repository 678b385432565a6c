// A third-party plugin's setup may reach out (a license check), and one whose call never returns held a start for
// ever before listening (or ended it, exit 13, with nothing said: Node's unsettled top-level await) and a reload for
// ever. Its setup is given a bound; past it the config is refused like one whose setup threw. The bound is counted as
// every bound in the gateway is (core/deadline.ts): a setup answered while the loop was busy is not refused.
import { settleWithin as bounded } from "../deadline.ts";

/** How long a plugin's setup may take, at start and at each reload. */
export const PLUGIN_SETUP_TIMEOUT_MS = 60_000;

/** The setup's outcome, or a rejection naming the bound once it has passed. The timer keeps the process alive meanwhile. */
export function settleWithin<T>(setup: Promise<T>, ms: number, late: (state: T) => void): Promise<T> {
  let timedOut = false;
  // A setup that finishes after it was given up on set something up that no config will use: hand it back.
  setup.then((state) => timedOut && late(state), () => {});
  return bounded(setup, ms, () => {
    timedOut = true;
    throw new Error(`did not finish within ${ms / 1000} s (a setup must settle; give what it waits on a timeout of its own)`);
  });
}
