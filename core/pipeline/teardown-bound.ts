// A third-party plugin's teardown may wait on something gone (`await client.quit()` on a dead connection): one that
// never settled held a SIGTERM's shutdown for ever (the pod waited out its grace and was killed, the store never
// closed) and, after a reload, kept the old config's provider connections open. Each is given a bound, as setup is
// (./setup-bound.ts); past it the gateway says which plugin it left behind and goes on. A built-in's teardown is the
// gateway's own work (it bounds its own waits) and is awaited.
import { settleWithin } from "../deadline.ts";
import type { Logger } from "../log.ts";

/** How long a third-party plugin's teardown may take, at a reload and at shutdown. */
export const PLUGIN_TEARDOWN_TIMEOUT_MS = 5_000;

export interface TearDown {
  name: string;
  teardown: (() => void | Promise<void>) | undefined;
  /** A built-in plugin: not bounded. */
  trusted?: boolean;
}

/** Runs one plugin's teardown: a throw is logged; a third-party one unsettled after `ms` is logged and left behind. */
export async function tearDownPlugin(p: TearDown, log: Pick<Logger, "warn">, ms = PLUGIN_TEARDOWN_TIMEOUT_MS): Promise<void> {
  if (!p.teardown) return;
  const failed = (err: unknown) => log.warn(`plugin ${p.name} teardown failed`, { plugin: p.name, error: String(err) });
  let running: Promise<void>;
  try {
    running = Promise.resolve(p.teardown());
  } catch (err) {
    return failed(err);
  }
  if (p.trusted) return running.catch(failed);
  // Its rejection after the bound is still logged, once.
  return settleWithin(running.catch(failed), ms, () => {
    log.warn(`plugin ${p.name} teardown did not finish within ${ms / 1000} s; going on without it`, { plugin: p.name });
  });
}
