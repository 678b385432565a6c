// Per-request ids. ulid's default PRNG asks the OS for one byte per character (16 getRandomValues calls per id,
// ~6% of the gateway's CPU under load); the same CSPRNG bytes drawn from a pooled buffer cost next to nothing.
import { randomFillSync } from "node:crypto";
import { ulid } from "ulid";

const pool = new Uint8Array(4096);
let at = pool.length;

/** One crypto-random byte from the pool. */
function randomByte(): number {
  if (at === pool.length) {
    randomFillSync(pool);
    at = 0;
  }
  return pool[at++]!;
}

/** A PRNG in ulid's shape (a fraction in [0, 1)), one crypto-random byte per call. */
export function pooledPrng(): number {
  return randomByte() / 256;
}

export function generationId(): string {
  return `gen_${ulid(undefined, pooledPrng)}`;
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

/** `bytes` crypto-random bytes as hex, from the pool (a randomBytes call per id cost ~6 us each: 0.6 s for 99 000). */
export function randomHex(bytes: number): string {
  let hex = "";
  for (let i = 0; i < bytes; i++) hex += HEX[randomByte()]!;
  return hex;
}

/**
 * `req_` and 32 hex digits laid out as a UUIDv7 (RFC 9562): the first 12 are the time in ms, the rest crypto-random
 * (74 bits). Ids made close together sort together, so the ledger's index on request ids takes a commit's new ids on
 * one page; random ids dirtied one index page per record in every group commit (issue 32).
 */
export function requestId(now = Date.now()): string {
  let id = `req_${now.toString(16).padStart(12, "0")}7`;
  id += HEX[randomByte()]!.slice(1) + HEX[randomByte()]!; // 12 random bits after the version
  id += HEX[0x80 | (randomByte() & 0x3f)]!; // the variant, then 6 random bits
  for (let i = 0; i < 7; i++) id += HEX[randomByte()]!;
  return id;
}
