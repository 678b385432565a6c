// How long a Redis server has surely been running, from its INFO server reply: when it last (re)started, which tells a
// replica whether Redis lost its data after the replica's last confirmed read of its API keys (core/keys/api-keys.ts).
// uptime_in_seconds is not the elapsed time floored: Redis subtracts its start second from its current second (both
// whole seconds), so it reads 1 a third of a second after a start at x.9 s. The sub-second part of server_time_usec
// (Redis 7) says where in its current second the server is; without it a whole second is taken off. Either way the
// answer is never more than the time really elapsed: a restart is placed late, never early.

/** The least time (ms) the server answering this INFO server reply has been running; undefined when it does not say. */
export function leastUptimeMs(info: string): number | undefined {
  const uptime = /^uptime_in_seconds:(\d+)\s*$/m.exec(info)?.[1];
  if (uptime === undefined) return undefined;
  const usec = /^server_time_usec:(\d+)\s*$/m.exec(info)?.[1];
  // Started within the second `now second - uptime`: at its end at the latest.
  const intoSecond = usec === undefined ? 0 : (Number(BigInt(usec) % 1_000_000n) / 1_000);
  return Math.max(0, (Number(uptime) - 1) * 1_000 + intoSecond);
}
