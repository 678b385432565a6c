// Every command to the store's Redis bounded (store.timeout_ms, or a CLI command's wait) as every other bound in the
// gateway is, by core/deadline.ts afterBound. ioredis's own commandTimeout fires in the timers phase that follows a
// busy stretch of the event loop (a big body parsed, a GC pause, a saturated host), before that turn's poll reads the
// reply already in the socket: a Redis that had answered was marked down, and requests got 503 STORE_UNAVAILABLE.
import type { Command, Redis } from "ioredis";
import { afterBound } from "../deadline.ts";
import { StoreTimeoutError } from "./unavailable.ts";

/**
 * A command Redis gave no reply to within its bound (a paused or overloaded server, a dead connection). A store call
 * that took too long, as the guard's own bound is: the store is suspected and probed, not marked down at once.
 */
export class RedisCommandTimeout extends StoreTimeoutError {
  constructor(readonly command: string, ms: number) {
    super(command, ms);
    this.message = `Command timed out (${command.toUpperCase()}: no reply within ${ms} ms)`;
    this.name = "RedisCommandTimeout";
  }
}

/** Set on a command once it has its bound: ioredis sends a command again after a reconnect, under the same bound. */
const BOUNDED = Symbol("bounded");

/** Every command `redis` sends from now on (a pipeline's too) fails with RedisCommandTimeout after `ms` unanswered. */
export function boundCommands(redis: Redis, ms: number): void {
  const send = redis.sendCommand.bind(redis);
  redis.sendCommand = (command, stream) => {
    const c = command as Command & { [BOUNDED]?: true };
    if (!c[BOUNDED]) {
      c[BOUNDED] = true;
      const { resolve, reject } = c;
      const cancel = afterBound(ms, () => c.reject(new RedisCommandTimeout(c.name, ms)));
      // The bound ends with the command, however it settles (no extra promise: a caller's unhandled rejection stays one).
      c.resolve = (value) => {
        cancel();
        return resolve(value);
      };
      c.reject = (err) => {
        cancel();
        reject(err);
      };
    }
    return send(command, stream);
  };
}
