// A third-party plugin's teardown may wait on something gone (`await client.quit()` on a dead connection): one that
// never settled held a SIGTERM's shutdown for ever (the pod waited out its grace and was killed, the store never
// closed) and, after a reload, kept the old config's provider connections open. Each is given a bound, as setup is
// (./setup-bound.ts); past it the gateway says which plugin it left behind and goes on. A built-in's teardown is the
// gateway's own work (it bounds its own waits) and is awaited. A config's plugins are torn down together under one
// bound: they tend to hang for the same reason (one dead Redis), and one after another three of them held a SIGTERM,
// and the store's close behind them, for 15 s.
import { settleWithin } from "../deadline.ts";
import type { Logger } from "../log.ts";

/** How long a config's third-party plugins' teardowns may take, together, at a reload and at shutdown. */
export const PLUGIN_TEARDOWN_TIMEOUT_MS = 5_000;

export interface TearDown {
  name: string;
  teardown: (() => void | Promise<void>) | undefined;
  /** A built-in plugin: not bounded. */
  trusted?: boolean;
}

/** Runs one plugin's teardown to its end; a throw or rejection is logged with the plugin's name, never thrown. */
function run(p: TearDown, log: Pick<Logger, "warn">): Promise<void> {
  const failed = (err: unknown) => log.warn(`plugin ${p.name} teardown failed`, { plugin: p.name, error: String(err) });
  try {
    return Promise.resolve(p.teardown?.()).then(() => {}, failed);
  } catch (err) {
    failed(err);
    return Promise.resolve();
  }
}

const leftBehind = (log: Pick<Logger, "warn">, name: string, ms: number) =>
  log.warn(`plugin ${name} teardown did not finish within ${ms / 1000} s; going on without it`, { plugin: name });

/** Runs one plugin's teardown: a throw is logged; a third-party one unsettled after `ms` is logged and left behind. */
export async function tearDownPlugin(p: TearDown, log: Pick<Logger, "warn">, ms = PLUGIN_TEARDOWN_TIMEOUT_MS): Promise<void> {
  await tearDownPlugins([p], log, ms);
}

/**
 * Runs the teardowns of one config's plugins together: the third-party ones for `ms` in all (each still pending then
 * is logged by name and left behind; its rejection after that is still logged, once), the built-ins' to the end.
 */
export async function tearDownPlugins(plugins: readonly TearDown[], log: Pick<Logger, "warn">, ms = PLUGIN_TEARDOWN_TIMEOUT_MS): Promise<void> {
  const pending = new Set<string>();
  const thirdParty: Promise<void>[] = [];
  const builtIn: Promise<void>[] = [];
  for (const p of plugins) {
    if (!p.teardown) continue;
    if (p.trusted) {
      builtIn.push(run(p, log));
      continue;
    }
    pending.add(p.name);
    thirdParty.push(run(p, log).then(() => void pending.delete(p.name)));
  }
  const bounded = thirdParty.length
    ? settleWithin(Promise.all(thirdParty), ms, () => { for (const name of pending) leftBehind(log, name, ms); })
    : undefined;
  await Promise.all([...builtIn, bounded]);
}
