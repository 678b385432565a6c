// Shared statistics in Redis: one hash per endpoint per 5-minute slot (fields t<bucket> and p<bucket> count TTFT
// and tokens/s samples by histogram bucket) and one per hour slot (ok, n). HINCRBY merges replicas for free;
// keys expire after their window. Writes are batched in memory and flushed once a second in one pipeline.
import type { Redis } from "ioredis";
import { ioredis } from "../store/ioredis.ts";
import { settleWithin } from "../deadline.ts";
import type { Logger } from "../log.ts";
import { bucketOf } from "./histogram.ts";
import {
  HOUR_SLOTS, HOUR_SLOT_MS, MINUTE_SLOTS, MINUTE_SLOT_MS, summarize,
  type AttemptSample, type EndpointStats, type HourData, type SlotData,
} from "./window.ts";

const FLUSH_MS = 1_000;
/** Keys held while Redis is unreachable; past this the oldest are dropped (stats are best effort). */
const MAX_PENDING_KEYS = 5_000;

export class RedisStats {
  private readonly redis: Redis;
  /** redis key -> field -> increment, with the key's time to live. */
  private pending = new Map<string, { ttl: number; fields: Map<string, number> }>();
  private readonly timer: NodeJS.Timeout;

  constructor(url: string, private readonly prefix: string, private readonly log?: Logger) {
    // Statistics are best effort: while Redis is unreachable, commands fail at once (no offline queue), counts wait in
    // memory until it is back, and reads fall back to this replica's own view. Nothing waits on a lost connection.
    this.redis = new (ioredis().Redis)(url, { lazyConnect: false, maxRetriesPerRequest: 1, enableOfflineQueue: false });
    let lastLog = 0;
    this.redis.on("error", (err) => {
      if (Date.now() - lastLog < 30_000) return;
      lastLog = Date.now();
      this.log?.warn("stats: redis error (live stats fall back to this replica's own)", { error: String(err) });
    });
    this.timer = setInterval(() => void this.flush().catch(() => {}), FLUSH_MS);
    this.timer.unref();
  }

  private minuteKey(endpoint: string, slot: number) {
    return `${this.prefix}mg:stats:${endpoint}:m:${slot}`;
  }

  private hourKey(endpoint: string, slot: number) {
    return `${this.prefix}mg:stats:${endpoint}:h:${slot}`;
  }

  private bump(key: string, ttl: number, field: string): void {
    let p = this.pending.get(key);
    if (!p) {
      p = { ttl, fields: new Map() };
      this.pending.set(key, p);
      if (this.pending.size > MAX_PENDING_KEYS) this.pending.delete(this.pending.keys().next().value!);
    }
    p.fields.set(field, (p.fields.get(field) ?? 0) + 1);
  }

  add(endpoint: string, s: AttemptSample, now: number): void {
    const m = Math.floor(now / MINUTE_SLOT_MS);
    const h = Math.floor(now / HOUR_SLOT_MS);
    const mTtl = Math.ceil((MINUTE_SLOTS + 1) * MINUTE_SLOT_MS / 1000);
    if (s.ttftMs !== undefined && Number.isFinite(s.ttftMs) && s.ttftMs >= 0) this.bump(this.minuteKey(endpoint, m), mTtl, `t${bucketOf(s.ttftMs)}`);
    if (s.tokensPerSecond !== undefined && Number.isFinite(s.tokensPerSecond) && s.tokensPerSecond >= 0) {
      this.bump(this.minuteKey(endpoint, m), mTtl, `p${bucketOf(s.tokensPerSecond)}`);
    }
    const hTtl = Math.ceil((HOUR_SLOTS + 1) * HOUR_SLOT_MS / 1000);
    this.bump(this.hourKey(endpoint, h), hTtl, "n");
    if (s.ok) this.bump(this.hourKey(endpoint, h), hTtl, "ok");
  }

  async flush(): Promise<void> {
    if (!this.pending.size) return;
    // Not connected: keep the counts (they aggregate, so memory stays bounded) until the connection is back.
    if (this.redis.status !== "ready") return;
    const batch = this.pending;
    this.pending = new Map();
    const multi = this.redis.pipeline();
    for (const [key, { ttl, fields }] of batch) {
      for (const [field, n] of fields) multi.hincrby(key, field, n);
      multi.expire(key, ttl);
    }
    const results = await multi.exec();
    const failed = results?.find(([err]) => err);
    if (failed) this.log?.warn("stats: redis flush failed", { error: String(failed[0]) });
  }

  /** Resolves once connected (tests; the service itself never waits for Redis). */
  ready(): Promise<void> {
    if (this.redis.status === "ready") return Promise.resolve();
    return new Promise((resolve) => this.redis.once("ready", () => resolve()));
  }

  async read(endpoint: string, now: number): Promise<EndpointStats> {
    if (this.redis.status !== "ready") throw new Error("redis not connected");
    await this.flush();
    const m = Math.floor(now / MINUTE_SLOT_MS);
    const h = Math.floor(now / HOUR_SLOT_MS);
    const multi = this.redis.pipeline();
    for (let i = 0; i < MINUTE_SLOTS; i++) multi.hgetall(this.minuteKey(endpoint, m - i));
    for (let i = 0; i < HOUR_SLOTS; i++) multi.hmget(this.hourKey(endpoint, h - i), "ok", "n");
    const res = (await multi.exec()) ?? [];
    const minutes = new Map<number, SlotData>();
    const hours = new Map<number, HourData>();
    for (let i = 0; i < MINUTE_SLOTS; i++) {
      const [err, hash] = res[i] ?? [];
      if (err) throw err;
      const slot: SlotData = { ttft: new Map(), tps: new Map() };
      for (const [field, count] of Object.entries((hash ?? {}) as Record<string, string>)) {
        const target = field[0] === "t" ? slot.ttft : field[0] === "p" ? slot.tps : undefined;
        target?.set(Number(field.slice(1)), Number(count));
      }
      minutes.set(m - i, slot);
    }
    for (let i = 0; i < HOUR_SLOTS; i++) {
      const [err, pair] = res[MINUTE_SLOTS + i] ?? [];
      if (err) throw err;
      const [ok, n] = (pair ?? []) as (string | null)[];
      if (n) hours.set(h - i, { ok: Number(ok ?? 0), n: Number(n) });
    }
    return summarize(minutes, hours, now);
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await settleWithin(this.flush().catch(() => {}), 1_000, () => {});
    this.redis.disconnect();
  }
}
