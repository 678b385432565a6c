// A restart placed from INFO server must never come out earlier than it was: a replica would count itself in step with
// a Redis that lost its data later than it thinks, and could write back a key revoked meanwhile.
import { describe, expect, it } from "vitest";
import { Redis } from "ioredis";
import { leastUptimeMs } from "./redis-uptime.ts";
import { RedisApiKeyStore } from "./api-keys-redis.ts";
import { startRedis } from "../../test/helpers/redis.ts";

const info = (fields: Record<string, string>) => `# Server\r\nredis_version:7.0.15\r\n${Object.entries(fields).map(([k, v]) => `${k}:${v}\r\n`).join("")}`;

describe("leastUptimeMs", () => {
  it("a start at x.913 s read 0.327 s later says uptime 1: at most 0.29 s, not 1 s", () => {
    // Measured on redis-server 7.0.15: started at …5.913, INFO at …6.240 (server_time_usec) gives uptime_in_seconds 1.
    expect(leastUptimeMs(info({ uptime_in_seconds: "1", server_time_usec: "1764343206240123" }))).toBeCloseTo(240.123, 3);
    expect(leastUptimeMs(info({ uptime_in_seconds: "2", server_time_usec: "1764343207241000" }))).toBe(1_241);
  });

  it("without server_time_usec (before Redis 7) a whole second is taken off", () => {
    expect(leastUptimeMs(info({ uptime_in_seconds: "5" }))).toBe(4_000);
    expect(leastUptimeMs(info({ uptime_in_seconds: "0" }))).toBe(0);
  });

  it("a reply without uptime_in_seconds (a server that does not say) gives undefined", () => {
    expect(leastUptimeMs(info({ redis_mode: "standalone" }))).toBeUndefined();
    expect(leastUptimeMs("")).toBeUndefined();
  });

  it("a real redis-server: never more than the time since it was started, read over a second and a half", async () => {
    const startedBefore = Date.now();
    const redis = await startRedis({ aof: false });
    const r = new Redis(redis.url);
    try {
      const keys = new RedisApiKeyStore(r, "mgu:");
      for (let i = 0; i < 8; i++) {
        const up = (await keys.serverUptimeMs())!;
        expect(up).toBeGreaterThanOrEqual(0);
        expect(up).toBeLessThanOrEqual(Date.now() - startedBefore);
        await new Promise((res) => setTimeout(res, 200));
      }
    } finally {
      r.disconnect();
      await redis.stop();
    }
  });
});
