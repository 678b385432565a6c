// SIGHUP's default action ends the process (exit 129). The gateway reloads on it once it listens, but a SIGHUP before
// that (a config tool signalling a gateway it had just restarted) killed the start. From the moment `start` runs
// (bin/model-gateway.mjs begins even earlier, before the CLI is loaded, through the same global) a SIGHUP is only
// noted; the reload it asks for is done once the gateway listens, since the config may have been read before it.

/** Shared with bin/model-gateway.mjs, which sets it up the same way before it has loaded the CLI. */
const HELD = Symbol.for("model-gateway.sighup-before-listen");

interface Held {
  asked: boolean;
  listener: () => void;
}

type WithHeld = typeof globalThis & { [HELD]?: Held };

/** From now until releaseSighup(), a SIGHUP is noted (and said on stderr) instead of ending the process. */
export function holdSighup(): void {
  const g = globalThis as WithHeld;
  if (g[HELD]) return; // the bin began it
  const held: Held = {
    asked: false,
    listener: () => {
      held.asked = true;
      process.stderr.write("SIGHUP before the gateway listened: the config is read again once it does\n");
    },
  };
  g[HELD] = held;
  process.on("SIGHUP", held.listener);
}

/** Stop noting SIGHUPs (the gateway's own handler has taken over, or the start failed): was one asked for meanwhile? */
export function releaseSighup(): boolean {
  const g = globalThis as WithHeld;
  const held = g[HELD];
  if (!held) return false;
  process.off("SIGHUP", held.listener);
  delete g[HELD];
  return held.asked;
}
