// The API keys created through the admin API, as every replica serves them: a cache of the store's keys
// (hash -> project, status, expiry, limits), loaded at start and reloaded whenever the store's key version changes
// (polled every store.key_refresh_ms, one small read), at the poll after each change this replica writes (a store put
// back to the version read before it would look unchanged), and in full every minute regardless. So:
// - a key created on another replica works here at once: a key the cache does not know is looked up in the store
//   once (bounded by store.timeout_ms; a miss is remembered for a second, so a flood of unknown keys costs one
//   read per key per second at most, and at most MAX_LOOKUPS run at once);
// - while the store is unreachable the cached keys keep working (nothing on the request path waits for it);
// - a revocation or rotation made on another replica takes effect here within key_refresh_ms (one made here, at once);
// - a store that lost keys this cache holds, or newer states of them (Redis restarted without its data, flushed, or
//   an older backup restored), gets them written back (lost-keys.ts), but only by a replica in step: its cache was
//   confirmed to match the store shortly before the store lost its data. When that was is bounded by the store, not
//   by when this replica could reach it (a partition looks the same as a store away): a Redis that restarted since
//   the last confirmed read lost it at the restart at the latest (INFO server's uptime), and the restart must come
//   within 3 x key_refresh_ms + 1 s of that read (restartWindowMs: room for an outage of 2 x key_refresh_ms);
//   otherwise (FLUSHALL, a failover to an empty server that was running, no uptime to be had) the read that saw the
//   loss must come within 2 x key_refresh_ms of it. So a key revoked elsewhere can only come back if revoked less
//   than 3 x key_refresh_ms + 1 s before Redis restarted empty (2 x key_refresh_ms before another loss). One not in
//   step may hold a key as it was before a revocation made meanwhile, so it writes back only revocations and
//   rotations, and says which keys it did not restore. Every replica holds the whole key set, so together the replicas
//   in step hold every key. A state
//   is written back only when the store holds the key at a lower rev (its own change counter) than this cache saw,
//   never because of a clock: a cache that missed another replica's later change just takes it; and then only what
//   makes the store's key more restrictive (an earlier expiry, lower limits): revs go back with a restored backup.
// Last use is kept in memory and written to the store every LAST_USE_FLUSH_MS, never once per request.
// A store's "no such key" is final (auth's x-should-retry: false) only while no write-back may still restore it: not
// within 2 x key_refresh_ms of this cache's poll seeing the store lose data or be restored (the replicas' write-backs
// may be under way), nor when no poll found the cache in step lately. The poll tells, not a read per miss.
import type { Logger } from "../log.ts";
import type { KeyRuntime } from "../config/runtime.ts";
import { epochOf, patched, type ApiKeyStore, type KeyPatch, type RotateResult, type StoredKey } from "../store/api-keys-types.ts";
import { isNewer, lostKeys, tighterPatch, undonePatch, type LostKeys } from "./lost-keys.ts";

export const DEFAULT_KEY_REFRESH_MS = 2_000;
const FULL_RELOAD_MS = 60_000;
const NEGATIVE_TTL_MS = 1_000;
const NEGATIVE_MAX = 10_000;
const MAX_LOOKUPS = 64;
const LAST_USE_FLUSH_MS = 15_000;

/**
 * How long after a replica's last confirmed read a Redis restart still finds it in step: one poll interval (the read
 * before the outage), an outage of up to 2 x key_refresh_ms, and the second INFO's uptime may place the restart late.
 * So a key revoked elsewhere less than this before Redis restarted empty can come back (see inStepByRestart).
 */
export function restartWindowMs(refreshMs: number): number {
  return 3 * refreshMs + 1_000;
}

export interface ApiKeyDirectory {
  /** The key with this sha256 (hex), from the cache, else (once) from the store; undefined when there is none. */
  find(sha256: string): KeyRuntime | Promise<KeyRuntime | undefined> | undefined;
  /**
   * After find gave undefined: did the store just say it has no such key, with no write-back able to restore it? False
   * when it could not be asked (down, too many lookups at once), or when it lost its data or was restored lately (a
   * replica's write-back may bring the key back), so the refusal is one a later try may pass (auth sends
   * x-should-retry: false only when true).
   */
  absent(sha256: string): boolean;
  /** A request authenticated with this key, from gateway.yaml or the store (kept in memory, written now and then). */
  used(key: KeyRuntime, at: number): void;
}

function runtimeOf(k: StoredKey): KeyRuntime {
  return {
    id: k.id,
    projectId: k.project,
    hash: Buffer.from(k.sha256, "hex"),
    expiresAt: k.expiresAt,
    revoked: k.revokedAt !== null,
    source: "api",
    ...(k.rateLimits ? { rateLimits: k.rateLimits } : {}),
    ...(k.budget ? { budget: k.budget } : {}),
  };
}

interface Cached { stored: StoredKey; runtime: KeyRuntime }

/** Whether a cache was in step with the store when it lost data, and when the store restarted if that was asked. */
interface Step { inStep: boolean; restartedAt?: number }

export class ApiKeys implements ApiKeyDirectory {
  private readonly byHash = new Map<string, Cached>();
  /**
   * Keys not found, when, and whether that is final: the store answered, outside a write-back's reach (false: it could
   * not be asked, or a replica may yet write the key back; either proves nothing).
   */
  private readonly misses = new Map<string, { at: number; final: boolean }>();
  /** When this cache last saw the store lose data or be restored (ms): write-backs may follow for 2 x key_refresh_ms. */
  private lossSeenAt = -Infinity;
  private readonly lookups = new Map<string, Promise<KeyRuntime | undefined>>();
  private readonly uses = new Map<KeyRuntime, number>();
  private readonly flushedUses = new Map<string, number>();
  /** The uses a flush has taken and the store has not yet confirmed: still this replica's to report meanwhile. */
  private flushing = new Map<string, number>();
  private version: string | undefined;
  /**
   * Counts the writes this replica makes (changes made through it, write-backs). They move the store's version past
   * the one the last poll read, so a store put back to that version (its last writes lost, a backup of then restored)
   * would look unchanged: after one, the next poll reloads whatever version it reads (and a poll begun before one
   * keeps no version).
   */
  private ownChanges = 0;
  private lastFull = 0;
  private timer: NodeJS.Timeout | undefined;
  private flushTimer: NodeJS.Timeout | undefined;
  private refreshing: Promise<void> | undefined;
  private writingBack: Promise<void> | undefined;
  private closed = false;
  /** When the cache last matched the store (ms), for the admin API. */
  syncedAt = 0;
  /** When a read that found the cache matching the store began (ms), and the store's epoch then: see take(). */
  private inSync: { at: number; epoch: string } | undefined;

  /** This replica's wall clock (a test gives one replica a clock that runs ahead). */
  private readonly now: () => number;

  constructor(private readonly store: ApiKeyStore, private readonly o: { refreshMs: () => number; log: Logger; now?: () => number }) {
    this.now = o.now ?? (() => Date.now());
  }

  /** Load the keys and start polling; a store that cannot answer now is polled until it does (never fails the boot). */
  async start(): Promise<void> {
    await this.refresh(true);
    this.schedule();
    this.flushTimer = setInterval(() => void this.flushUses(), LAST_USE_FLUSH_MS);
    this.flushTimer.unref();
  }

  private schedule(): void {
    if (this.closed) return;
    this.timer = setTimeout(() => {
      void this.refresh(false).finally(() => this.schedule());
    }, this.o.refreshMs());
    this.timer.unref();
  }

  /** Reload when the version moved (or `full`, or a minute has passed); one at a time. */
  refresh(full = false): Promise<void> {
    return (this.refreshing ??= (async () => {
      const at = this.now();
      try {
        const changes = this.ownChanges;
        const v = await this.store.version();
        if (!full && v === this.version && this.now() - this.lastFull < FULL_RELOAD_MS) {
          this.syncedAt = this.now();
          this.inSync = { at, epoch: epochOf(v) };
          return;
        }
        await this.take(v, await this.store.list(), at, changes);
        this.lastFull = this.syncedAt = this.now();
      } catch (err) {
        // The store is down or slow: the cache keeps serving what it has.
        this.o.log.debug("api keys: refresh failed; serving the cached keys", { error: String((err as Error)?.message ?? err) });
      } finally {
        this.refreshing = undefined;
      }
    })());
  }

  /**
   * Take the store's keys (read at `at`, `version` read first); what it lost that this cache knows is kept here and
   * written back when the cache was in step: a read that found it matching the store began within 2 x key_refresh_ms
   * before this one (the polls in between could have missed nothing), or the store restarted within that time after
   * it (inStepByRestart). Returns the merged set.
   */
  private async take(version: string, stored: StoredKey[], at: number, changes: number): Promise<StoredKey[]> {
    const epoch = epochOf(version);
    const was = this.inSync;
    const epochChanged = was !== undefined && was.epoch !== epoch;
    let step: Step = { inStep: was !== undefined && at - was.at <= 2 * this.o.refreshMs() };
    // Only when it matters (keys to restore that an out-of-step cache may not) is the store asked when it restarted.
    if (was && !step.inStep && lostKeys(this.all(), stored, { inStep: false, epochChanged }).notRestored.length) step = await this.inStepByRestart(was.at);
    const keys = this.replace(stored, { inStep: step.inStep, epochChanged }, was, step.restartedAt);
    this.version = changes === this.ownChanges ? version : undefined;
    this.inSync = { at, epoch };
    return keys;
  }

  /**
   * In step although the read that saw the loss came more than 2 x key_refresh_ms after the last confirmed one (`was`):
   * when the store restarted after that read, within restartWindowMs of it. The restart is when Redis came back, so
   * the span holds the outage too; the window lets any Redis back within 2 x key_refresh_ms of going away keep the
   * keys, whatever the poll phase. It lost its data at the restart at the latest, so a change made elsewhere that this
   * cache missed was made less than that window before the loss; how long this replica then took to see it (polls
   * failing while Redis was away, or while this replica was cut off) does not matter. A store that did not restart
   * since (FLUSHALL, a failover to an empty server that was running), or cannot say (INFO refused, failing, or without
   * an uptime), keeps the read rule: not in step.
   */
  private async inStepByRestart(was: number): Promise<Step> {
    if (!this.store.serverUptimeMs) return { inStep: false };
    let uptime: number | undefined;
    try {
      uptime = await this.store.serverUptimeMs();
      if (uptime === undefined) this.o.log.warn("api keys: INFO server gave no uptime_in_seconds, so when the store last restarted is unknown; judged by when this replica saw the loss");
    } catch (err) {
      this.o.log.warn("api keys: could not ask the store when it last restarted (INFO server); judged by when this replica saw the loss",
        { error: String((err as Error)?.message ?? err) });
    }
    if (uptime === undefined) return { inStep: false };
    const restartedAt = this.now() - uptime; // a least uptime: this is the latest the restart can have been
    return { inStep: restartedAt > was && restartedAt - was <= restartWindowMs(this.o.refreshMs()), restartedAt };
  }

  private replace(stored: StoredKey[], o: { inStep: boolean; epochChanged: boolean }, was: { at: number; epoch: string } | undefined, restartedAt: number | undefined): StoredKey[] {
    const lost = lostKeys(this.all(), stored, o);
    if (o.epochChanged || lost.missing.length || lost.undone.length || lost.notRestored.length) this.lossSeenAt = this.now();
    const keep = new Map<string, StoredKey>(lost.undone.map(({ key, patch }) => [key.sha256, patched(key, patch)]));
    const keys = [...stored.map((k) => keep.get(k.sha256) ?? k), ...lost.missing];
    const seen = new Set<string>();
    for (const k of keys) {
      seen.add(k.sha256);
      const old = this.byHash.get(k.sha256);
      // Unchanged records keep their runtime object (plugins cache per-key plans on it).
      if (old && JSON.stringify(old.stored) === JSON.stringify(k)) continue;
      this.byHash.set(k.sha256, { stored: k, runtime: runtimeOf(k) });
    }
    for (const h of this.byHash.keys()) if (!seen.has(h)) this.byHash.delete(h);
    this.misses.clear();
    if (lost.notRestored.length) {
      this.o.log.error("api keys: the store no longer holds keys (or newer states of them) this replica knew, but this replica was not in step with " +
        "the store when it lost them (its last confirmed read more than 3 x store.key_refresh_ms + 1 s before the store restarted, or, without a restart, more than 2 x store.key_refresh_ms " +
        "before this replica saw the loss), so its copy may be stale (a revocation made meanwhile elsewhere): not written back. Create the keys " +
        "again if they are still needed, or change them again",
      { keys: lost.notRestored.map((k) => `${k.project}/${k.id}`), lastInStep: was ? new Date(was.at).toISOString() : null,
        storeRestartedAt: restartedAt === undefined ? null : new Date(restartedAt).toISOString() });
    }
    if (lost.missing.length || lost.undone.length) this.writeBack(lost, o.epochChanged, was?.epoch);
    return keys;
  }

  /** Put back into the store the keys, states, revocations and rotations it lost (one write-back at a time). */
  private writeBack(lost: LostKeys, epochChanged: boolean, epochBefore: string | undefined): void {
    this.writingBack ??= (async () => {
      let restored = 0;
      let redone = 0;
      const taken: StoredKey[] = [];
      const named: string[] = [];
      try {
        // Written by this replica, like its own changes: a store that loses these too is not taken as unchanged.
        await this.changing(async () => {
          for (const k of lost.missing) {
            if (await this.store.create(k)) {
              restored++;
              named.push(`${k.project}/${k.id}`);
              continue;
            }
            // Another replica put it back first (perhaps an older state), or another key has its id now.
            const now = await this.store.get(k.sha256);
            const patch = now && ((isNewer(k, now, epochChanged) && tighterPatch(k, now)) || undonePatch(k, now));
            if (!now) taken.push(k);
            // Put back revoked by a replica that saw more (a revocation or rotation this one had not polled yet): taken
            // at once, not served as this cache last saw it until the next poll. Only ever a revocation: nothing let in.
            else if (now.revokedAt !== null && k.revokedAt === null) this.put(now);
            else if (patch && (await this.store.update(k.sha256, patch))) {
              redone++;
              named.push(`${k.project}/${k.id}`);
            }
          }
          for (const { key, patch } of lost.undone) {
            if (!(await this.store.update(key.sha256, patch))) continue;
            redone++;
            named.push(`${key.project}/${key.id}`);
          }
        });
      } catch (err) {
        this.version = undefined; // reload at the next poll, and try again (still as after the loss)
        if (this.inSync && epochBefore !== undefined) this.inSync.epoch = epochBefore;
        this.o.log.error("api keys: the store lost keys this replica knows (Redis lost its data, or was restored from an older backup) " +
          "and writing them back failed: they keep working on this replica only until it succeeds (tried again at the next refresh)",
        { missing: lost.missing.length, statesUndone: lost.undone.length, error: String((err as Error)?.message ?? err) });
        return;
      } finally {
        this.writingBack = undefined;
      }
      for (const k of taken) this.byHash.delete(k.sha256);
      if (taken.length) {
        this.o.log.error("api keys: keys the store lost could not be written back: another key has their id now; create them again if they are still needed",
          { keys: taken.map((k) => `${k.project}/${k.id}`) });
      }
      if (restored || redone) {
        this.o.log.warn("api keys: the store no longer held keys this replica knew, or held older states of them (Redis lost its data, or was restored from an older backup): written back",
          { restored, statesRestored: redone, keys: named.slice(0, 20) });
      }
    })();
  }

  /** Apply a change made through this replica at once (other replicas see it at their next poll). */
  private put(k: StoredKey): void {
    this.byHash.set(k.sha256, { stored: k, runtime: runtimeOf(k) });
    this.misses.delete(k.sha256);
  }

  find(sha256: string): KeyRuntime | Promise<KeyRuntime | undefined> | undefined {
    const hit = this.byHash.get(sha256);
    if (hit) return hit.runtime;
    const missed = this.misses.get(sha256);
    if (missed !== undefined && this.now() - missed.at < NEGATIVE_TTL_MS) return undefined;
    const pending = this.lookups.get(sha256);
    if (pending) return pending;
    if (this.lookups.size >= MAX_LOOKUPS) return undefined;
    const p = this.store.get(sha256).then(
      (k) => {
        if (k) {
          this.put(k);
          return this.byHash.get(sha256)!.runtime;
        }
        this.miss(sha256, this.settled());
        return undefined;
      },
      () => {
        this.miss(sha256, false); // store down: the cache is all there is
        return undefined;
      },
    ).finally(() => this.lookups.delete(sha256));
    this.lookups.set(sha256, p);
    return p;
  }

  private miss(sha256: string, final: boolean): void {
    if (this.misses.size >= NEGATIVE_MAX) this.misses.clear();
    this.misses.set(sha256, { at: this.now(), final });
  }

  /**
   * Whether the store's "no such key" stands, by this cache's last poll (at most key_refresh_ms old; no read of its own,
   * so a spray of unknown keys costs the store one read each): the poll found the cache in step with the store within
   * 2 x key_refresh_ms, and no loss was seen within 2 x key_refresh_ms (a replica in step writes back within one poll
   * of seeing it). A loss since the last poll is seen at the next one: until then a miss counts as final.
   */
  private settled(): boolean {
    const now = this.now();
    const window = 2 * this.o.refreshMs();
    return this.inSync !== undefined && now - this.inSync.at <= window && now - this.lossSeenAt > window;
  }

  absent(sha256: string): boolean {
    const missed = this.misses.get(sha256);
    return missed !== undefined && missed.final && this.now() - missed.at < NEGATIVE_TTL_MS;
  }

  used(key: KeyRuntime, at: number): void {
    this.uses.set(key, at);
  }

  /** Write the last uses gathered since the last flush; kept for the next one when the store cannot take them. */
  async flushUses(): Promise<void> {
    if (!this.uses.size) return;
    const taken = new Map(this.uses);
    this.uses.clear();
    const batch = new Map<string, number>();
    for (const [k, at] of taken) {
      const h = k.hash.toString("hex");
      if (at > (batch.get(h) ?? 0)) batch.set(h, at);
    }
    this.flushing = batch;
    try {
      await this.store.touch(batch);
      for (const [h, at] of batch) this.flushedUses.set(h, at);
    } catch {
      for (const [k, at] of taken) if (!this.uses.has(k)) this.uses.set(k, at);
    } finally {
      this.flushing = new Map();
    }
  }

  /** Every cached key (from the store's last answer, plus this replica's changes). */
  all(): StoredKey[] {
    return [...this.byHash.values()].map((c) => c.stored);
  }

  /** The last use of each key: the store's (every replica's flushed uses) merged with this replica's newer ones. */
  async lastUses(): Promise<Map<string, number>> {
    let stored = new Map<string, number>();
    try {
      stored = await this.store.lastUsed();
    } catch {
      stored = new Map(this.flushedUses);
    }
    for (const [h, at] of this.flushing) if (at > (stored.get(h) ?? 0)) stored.set(h, at);
    for (const [k, at] of this.uses) {
      const h = k.hash.toString("hex");
      if (at > (stored.get(h) ?? 0)) stored.set(h, at);
    }
    return stored;
  }

  /** The store's answer when it can give one, else the cache (a listing still works while the store is down). */
  async list(): Promise<{ keys: StoredKey[]; fromCache: boolean }> {
    try {
      const at = this.now();
      const changes = this.ownChanges;
      const version = await this.store.version();
      return { keys: await this.take(version, await this.store.list(), at, changes), fromCache: false };
    } catch {
      return { keys: this.all(), fromCache: true };
    }
  }

  /** Create a key; false when the project already has a key with this id. */
  async create(k: StoredKey): Promise<boolean> {
    const record = { ...k, updatedAt: this.now() };
    const ok = await this.changing(() => this.store.create(record));
    if (ok) this.put(record);
    return ok;
  }

  async update(sha256: string, patch: KeyPatch): Promise<StoredKey | undefined> {
    const k = await this.changing(() => this.store.update(sha256, { ...patch, updatedAt: this.changedAt(sha256) }));
    if (k) this.put(k);
    return k;
  }

  /** Rotate atomically (ApiKeyStore.rotate); both keys are applied here at once. */
  async rotate(sha256: string, fresh: StoredKey, patch: KeyPatch): Promise<RotateResult> {
    const record = { ...fresh, updatedAt: this.now() };
    const r = await this.changing(() => this.store.rotate(sha256, record, { ...patch, updatedAt: this.changedAt(sha256) }));
    if (r.ok) {
      this.put(record);
      this.put(r.previous);
    }
    return r;
  }

  /** A change made through this replica: the next poll reloads, whatever version it reads (see ownChanges). */
  private async changing<T>(write: () => Promise<T>): Promise<T> {
    this.ownChanges++;
    try {
      return await write();
    } finally {
      this.ownChanges++;
      this.version = undefined;
    }
  }

  /** A change's updatedAt (for reading; never compared): now, but after the key's last one as this replica saw it. */
  private changedAt(sha256: string): number {
    return Math.max(this.now(), (this.byHash.get(sha256)?.stored.updatedAt ?? 0) + 1);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    clearInterval(this.flushTimer);
    await this.refreshing;
    await this.writingBack;
    await this.flushUses();
  }
}
