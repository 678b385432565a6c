import { describe, expect, it } from "vitest";
import { idempotencyRequestHash } from "./idempotent-replay.ts";

const ctxOf = (body: unknown) => ({ protocol: "openai", params: {}, body }) as never as Parameters<typeof idempotencyRequestHash>[0];

describe("idempotencyRequestHash", () => {
  it("walks the body once per request: the budget's look and the idempotency plugin share the hash", () => {
    let reads = 0;
    const body = { model: "m", get input() { reads++; return "a large body"; } };
    const ctx = ctxOf(body);
    const first = idempotencyRequestHash(ctx);
    expect(reads).toBe(1);
    expect(idempotencyRequestHash(ctx)).toBe(first);
    expect(reads).toBe(1);
  });

  it("hashes anew when a plugin replaced the body, and ignores the order of its members", () => {
    const ctx = ctxOf({ model: "m", input: "a" });
    const before = idempotencyRequestHash(ctx);
    (ctx as { body: unknown }).body = { input: "b", model: "m" };
    expect(idempotencyRequestHash(ctx)).not.toBe(before);
    expect(idempotencyRequestHash(ctxOf({ input: "a", model: "m" }))).toBe(before);
  });
});
