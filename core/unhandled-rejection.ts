// A promise rejection nobody handles — a plugin's fire-and-forget call, a stray promise of the gateway's own — is
// logged and the process keeps serving. Node's default ends the process, and with it every request in flight, for
// one request's forgotten promise. The code that made such a promise has already moved on without its result, so
// nothing was left half-done by it. A synchronous uncaught exception is different: it may stop a callback midway
// through changing shared state (a pool, a counter, a lock), so it still ends the process (a supervisor, or the
// `--workers` primary, starts a new one).
import type { Logger } from "./log.ts";

/** Install the handler once for this process; `log()` is the gateway's logger once there is one (stderr before). */
export function keepServingOnUnhandledRejection(log: () => Logger | undefined): void {
  process.on("unhandledRejection", (reason) => {
    const error = reason instanceof Error ? (reason.stack ?? String(reason)) : String(reason);
    const msg = "unhandled promise rejection (a plugin's or the gateway's); the process keeps serving";
    const l = log();
    if (l) l.error(msg, { error });
    else process.stderr.write(`${msg}: ${error}\n`);
  });
}
