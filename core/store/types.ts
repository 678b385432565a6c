// One Store interface, three backends (memory, sqlite, redis). Every check-and-update is a single atomic step
// in the backend, so concurrent requests (and, on Redis, replicas) never race each other.
import type { SseEvent } from "../sse/parse.ts";
import type { ResponseStore } from "./responses-types.ts";
import type { MemoStore } from "./memo-types.ts";
import type { ApiKeyStore } from "./api-keys-types.ts";
import type { ResponseCacheStore } from "./response-cache-types.ts";
import type { LedgerReader, LedgerRecord } from "../contracts/ledger-reader.ts";

export type Period = "day" | "week" | "month" | "total";

/** One rate-limit window to charge: `limit` units per minute (GCRA: refills continuously), `cost` units now. */
export interface RateCharge {
  key: string;
  limit: number;
  cost: number;
}

export interface RateState {
  key: string;
  limit: number;
  /** Units left right now, after this request. */
  remaining: number;
  /** Milliseconds until the window is full again. */
  resetMs: number;
}

export interface RateResult {
  ok: boolean;
  /** Per charge, in the order given. On refusal the state is the unchanged one. */
  windows: RateState[];
  /** On refusal: milliseconds until the request would fit. */
  retryAfterMs: number;
  /** On refusal: the windows that lacked room (indexes into the charges), which the 429 names. */
  refused: number[];
}

export interface Reservation {
  project: string;
  /** "day:2026-11-21", "week:2026-11-16", "month:2026-11" or "total". */
  periodKey: string;
  /** Start of the period, ms since the epoch (the ledger is summed from here). */
  periodStart: number;
  id: string;
  amountPico: bigint;
  limitPico: bigint;
  /** A reservation a crashed process never settled expires after this long. */
  leaseMs: number;
  /**
   * When the request was admitted (default: now). Its cost is charged to every period containing this moment, so its
   * hold counts against each of them, whatever period the budget has when it is checked (a reload may change it).
   */
  at?: number;
}

export interface ReserveResult {
  ok: boolean;
  spentPico: bigint;
  reservedPico: bigint;
}

/** Which reservation a ledger record settles (its id within the scope; the period it was made under). */
export interface Settlement {
  project: string;
  periodKey: string;
  id: string;
}

/** A reservation still in use, to be leased for `leaseMs` more (from now). */
export interface LeaseRenewal extends Settlement {
  leaseMs: number;
}

/** An idempotency claim whose request still runs, to be leased for `leaseMs` more (from now) if `owner` holds it. */
export interface ClaimRenewal {
  scope: string;
  owner: string;
  leaseMs: number;
}

/**
 * How a held claim is kept alive, where its owner said how often it renews it (idempotencyBegin's renewEveryMs):
 * how long since it was taken or last renewed, and that period. A claim silent for long past its period is a dead
 * owner's (plugins/idempotency/in-progress.ts).
 */
export interface ClaimRenewalState {
  quietMs: number;
  everyMs: number;
}

export type { LedgerEntry, LedgerOutcome } from "./ledger-entry.ts";
import type { LedgerEntry } from "./ledger-entry.ts";

/** A response kept for replay: by an idempotency key, or as a cached answer. */
export type StoredResponse =
  | { kind: "json"; status: number; headers: Record<string, string>; body: unknown }
  | { kind: "stream"; status: number; headers: Record<string, string>; events: SseEvent[] }
  | { kind: "bytes"; status: number; headers: Record<string, string>; contentType: string; base64: string };

export type IdempotencyBegin =
  | { state: "new" }
  /** inProcess: a claim kept in this process's memory (memory, SQLite), so its owner is alive; it never says renewal. */
  | { state: "pending"; renewal?: ClaimRenewalState; inProcess?: true }
  | { state: "mismatch" }
  | { state: "done"; response: StoredResponse };

export interface LedgerQuery {
  project?: string;
  /** ms since the epoch, inclusive. */
  since?: number;
}

/**
 * Every store also answers the operator plane's questions (LedgerReader): usage from rollups kept current by
 * record(), request search newest first, one record with its attempts.
 */
export interface Store extends LedgerReader {
  readonly kind: "memory" | "sqlite" | "redis";

  /** Charge every window or none: refused when any window lacks room. */
  rateLimit(charges: RateCharge[], now: number): Promise<RateResult>;
  /** Correct a window once the real cost is known (negative gives units back). */
  rateAdjust(key: string, limit: number, delta: number, now: number): Promise<void>;
  /** How the windows look now, charging nothing (the admin API's rate-limit state). */
  rateState(windows: { key: string; limit: number }[], now: number): Promise<RateState[]>;

  /** Reserve `amountPico` if spent + reserved + amount <= limit. */
  reserve(r: Reservation, now: number): Promise<ReserveResult>;
  release(s: Settlement): Promise<void>;
  /**
   * Lease these reservations until now + their leaseMs (never shorter than they are): the requests holding them still
   * run. One settled, released or already expired is not brought back. A process renews its live holds in batches
   * (lease-renewal.ts), so only a dead process's holds expire.
   */
  renewHolds(holds: LeaseRenewal[], now: number): Promise<void>;
  /** Spend recorded in the ledger for a project since periodStart. */
  spent(project: string, periodKey: string, periodStart: number): Promise<bigint>;
  /**
   * What requests in flight hold against a budget period now: the holds of those admitted within it, whatever period
   * each was made under (expired leases not counted).
   */
  reserved(project: string, periodKey: string, now: number): Promise<bigint>;

  /**
   * Write one ledger record (once per generation id; its attempt list kept with it), add its cost to the spend and
   * the usage rollups, and settle its reservation — atomically.
   */
  record(entry: LedgerRecord, settle?: Settlement): Promise<void>;
  ledger(q: LedgerQuery): Promise<LedgerEntry[]>;

  /**
   * Claim an idempotency key (scope = project + endpoint + key) or learn its state. `renewEveryMs`: how often the
   * owner will renew the claim (renewClaims), kept with it so a waiter can tell a live owner from a dead one: a
   * claim held with it answers "pending" with its `renewal`.
   */
  idempotencyBegin(scope: string, hash: string, owner: string, leaseMs: number, now: number, renewEveryMs?: number): Promise<IdempotencyBegin>;
  idempotencyComplete(scope: string, hash: string, owner: string, response: StoredResponse, ttlMs: number, now: number): Promise<void>;
  /** Give a claimed key back (the request failed); a waiting duplicate may then run it. */
  idempotencyRelease(scope: string, owner: string): Promise<void>;
  /**
   * Lease these claims until now + their leaseMs (never shorter than they are) where the same owner still holds them
   * (as idempotencyComplete checks): their requests still run. One completed, released, expired or taken over is left
   * alone. A process renews its live claims in batches (lease-renewal.ts), so only a dead process's claims expire.
   */
  renewClaims(claims: ClaimRenewal[], now: number): Promise<void>;

  /** Stored Responses API responses (store: true), per project, until their retention ends. */
  readonly responses: ResponseStore;
  /** Short-lived values one request leaves for a later one (signed reasoning a client may drop), by key. */
  readonly memos: MemoStore;
  /** API keys created through the admin API, shared by every replica (each serves them from its own cache). */
  readonly apiKeys: ApiKeyStore;
  /** Answers kept by the response cache, by key, each until its expiry (plugins/response-cache). */
  readonly responseCache: ResponseCacheStore;

  /**
   * Resolves when the store can take writes now (a write, not a read: a full disk or a read-only replica fails it);
   * rejects otherwise, with StoreStateLostError when it answers but no longer holds the gateway's state.
   */
  probe(): Promise<void>;
  /** Checks before serving (integrity of a file, persistence of a server); throws a message for the operator. */
  verify?(o: VerifyOptions): Promise<void>;
  /** A networked store calls `fn` whenever its connection is lost: the server may come back without its data. */
  onConnectionLost?(fn: () => void): void;

  close(): Promise<void>;
}

export interface VerifyOptions {
  /** SQLite: PRAGMA quick_check, the full integrity_check, or none. */
  integrity: "quick" | "full" | "off";
  /** Redis: refuse a server without AOF, and a server that lost the state this gateway last saw in it. */
  requirePersistence: boolean;
  /** A file on this machine that remembers which state (epoch) this gateway last saw in the store. */
  epochFile: string;
}
