// Asking the store when it last restarted (API keys, after a loss: INFO server) is an optional read: a Redis that
// refuses INFO (an ACL) or is slow to answer it must not have the guard mark the store down, which would turn every
// budgeted request into a 503 STORE_UNAVAILABLE; the caller just goes without the answer.
import { describe, expect, it } from "vitest";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Registry } from "prom-client";
import { MemoryStore } from "./memory.ts";
import { MemoryApiKeyStore } from "./api-keys-memory.ts";
import { GuardedStore, type SpooledRecord } from "./guard.ts";
import { Spool } from "./spool.ts";
import { createLogger } from "../log.ts";

/** A memory store whose key store answers INFO server as told: refused, never, or with an uptime. */
class InfoStore extends MemoryStore {
  info: "refused" | "hang" | number = "refused";
  override readonly apiKeys = Object.assign(new MemoryApiKeyStore(), {
    serverUptimeMs: (): Promise<number | undefined> => {
      if (this.info === "refused") return Promise.reject(new Error("NOPERM User gw has no permissions to run the 'info' command"));
      if (this.info === "hang") return new Promise(() => {});
      return Promise.resolve(this.info);
    },
  });
}

async function guarded() {
  const inner = new InfoStore();
  const registry = new Registry();
  const spool = await Spool.open<SpooledRecord>(mkdtempSync(join(tmpdir(), "mg-guard-uptime-")), "ledger");
  const g = new GuardedStore(inner, { config: () => ({ kind: "memory", timeout_ms: 100, probe_interval_ms: 50 }), log: createLogger("silent"), registry, spool });
  const failures = async () => (await registry.getMetricsAsJSON()).find((m) => m.name === "gateway_store_failures_total")?.values ?? [];
  return { inner, g, failures };
}

describe("GuardedStore: the store's uptime (INFO server)", () => {
  it("refused or unanswered: the caller gets an error within store.timeout_ms, counted, and the store stays up", async () => {
    const { inner, g, failures } = await guarded();
    await expect(g.apiKeys.serverUptimeMs!()).rejects.toThrow(/NOPERM/);
    inner.info = "hang";
    const t0 = Date.now();
    await expect(g.apiKeys.serverUptimeMs!()).rejects.toThrow();
    expect(Date.now() - t0).toBeLessThan(1_000);
    expect((await g.status()).up).toBe(true);
    expect(await g.apiKeys.version()).toBeDefined(); // other calls still go to the store
    expect(await failures()).toEqual(expect.arrayContaining([
      expect.objectContaining({ labels: { operation: "api_keys_server_uptime", reason: "error" }, value: 1 }),
      expect.objectContaining({ labels: { operation: "api_keys_server_uptime", reason: "timeout" }, value: 1 }),
    ]));
    inner.info = 42_000;
    expect(await g.apiKeys.serverUptimeMs!()).toBe(42_000);
    await g.close();
  });
});
