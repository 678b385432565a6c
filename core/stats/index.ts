// Live endpoint statistics, one service per gateway. In memory by default; with `store: {kind: redis}` every
// replica adds its samples to shared Redis hashes (batched each second) and reads the merged view back, so the
// catalog shows what the whole fleet has seen.
import type { GatewayHandle } from "../contracts/gateway.ts";
import type { StoreConfig } from "../generated/types/gateway.ts";
import { EndpointWindow, MINUTE_SLOTS, MINUTE_SLOT_MS, type AttemptSample, type EndpointStats } from "./window.ts";
import { merge, type Counts } from "./histogram.ts";
import { RedisStats } from "./redis.ts";

export type { AttemptSample, EndpointStats, Percentiles } from "./window.ts";

export const EMPTY_STATS: EndpointStats = { throughput_last_1h: null, latency_last_1h: null, uptime_last_1d: null };
/** How stale the shared view used for routing (sort: ttft/tps) may get before it is refreshed in the background. */
const VIEW_TTL_MS = 5_000;

const keyOf = (model: string, provider: string) => `${model}|${provider}`;

export class StatsService {
  private readonly local = new Map<string, EndpointWindow>();
  private readonly cached = new Map<string, { at: number; stats: EndpointStats; refreshing: boolean }>();

  constructor(private readonly remote?: RedisStats, readonly now: () => number = Date.now) {}

  record(s: AttemptSample): void {
    const key = keyOf(s.model, s.provider);
    let w = this.local.get(key);
    if (!w) {
      w = new EndpointWindow();
      this.local.set(key, w);
    }
    const now = this.now();
    w.record(s, now);
    this.remote?.add(key, s, now);
  }

  /** The freshest view: this process's own samples, or the fleet's from Redis. */
  async read(model: string, provider: string): Promise<EndpointStats> {
    const key = keyOf(model, provider);
    if (!this.remote) return this.local.get(key)?.read(this.now()) ?? EMPTY_STATS;
    try {
      const stats = await this.remote.read(key, this.now());
      this.cached.set(key, { at: this.now(), stats, refreshing: false });
      return stats;
    } catch {
      return this.local.get(key)?.read(this.now()) ?? EMPTY_STATS; // Redis down: say what this replica saw
    }
  }

  /** Synchronous view for routing decisions; with Redis, a cached copy refreshed in the background. */
  view(model: string, provider: string): EndpointStats {
    const key = keyOf(model, provider);
    const local = () => this.local.get(key)?.read(this.now()) ?? EMPTY_STATS;
    if (!this.remote) return local();
    const c = this.cached.get(key);
    if (!c || (this.now() - c.at > VIEW_TTL_MS && !c.refreshing)) {
      if (c) c.refreshing = true;
      void this.read(model, provider).catch(() => {});
    }
    return c?.stats ?? local();
  }

  /**
   * Time to first token over every endpoint this process served, per 5-minute slot of the last hour (the console's
   * overview): the same samples the endpoints' latency_last_1h is made of, merged. Reads the windows, adds nothing.
   */
  ttftSlots(now = this.now()): { start: number; counts: Counts }[] {
    const current = Math.floor(now / MINUTE_SLOT_MS);
    const slots = new Map<number, Counts>();
    for (const w of this.local.values()) {
      for (const [k, slot] of w.minutes) {
        if (k <= current - MINUTE_SLOTS || k > current || !slot.ttft.size) continue;
        let c = slots.get(k);
        if (!c) slots.set(k, (c = new Map()));
        merge(c, slot.ttft);
      }
    }
    return [...slots].sort((a, b) => a[0] - b[0]).map(([k, counts]) => ({ start: k * MINUTE_SLOT_MS, counts }));
  }

  async flush(): Promise<void> {
    await this.remote?.flush();
  }

  async close(): Promise<void> {
    await this.remote?.close();
  }
}

const services = new WeakMap<GatewayHandle, StatsService>();

export function statsOf(gateway: GatewayHandle): StatsService {
  let s = services.get(gateway);
  if (!s) {
    const store: StoreConfig = gateway.startConfig.store; // the store is read only at start
    const remote = store.kind === "redis" && store.url ? new RedisStats(store.url, store.prefix ?? "", gateway.log) : undefined;
    s = new StatsService(remote);
    services.set(gateway, s);
    const svc = s;
    gateway.onClose(() => svc.close());
  }
  return s;
}
