// Per-request ids. ulid's default PRNG asks the OS for one byte per character (16 getRandomValues calls per id,
// ~6% of the gateway's CPU under load); the same CSPRNG bytes drawn from a pooled buffer cost next to nothing.
import { randomFillSync } from "node:crypto";
import { ulid } from "ulid";

const pool = new Uint8Array(4096);
let at = pool.length;

/** A PRNG in ulid's shape (a fraction in [0, 1)), one crypto-random byte per call. */
export function pooledPrng(): number {
  if (at === pool.length) {
    randomFillSync(pool);
    at = 0;
  }
  return pool[at++]! / 256;
}

export function generationId(): string {
  return `gen_${ulid(undefined, pooledPrng)}`;
}
