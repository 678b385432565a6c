// Start-up against a Redis whose INFO does not give the persistence and eviction settings: the refusal says why. A
// server that did not answer in time (slow, paused, or store.timeout_ms too short for it) is told as such, not as
// INFO being forbidden ("Allow INFO" sent an operator after an ACL that was never there).
import { afterEach, describe, expect, it } from "vitest";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RedisStore } from "./redis.ts";
import { FakeRedis } from "./fake-redis.testkit.ts";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

/** Why a store on a server treating `command` as `how` refuses to start (store.timeout_ms 100). */
async function refusal(command: string, how: "never" | "refuse"): Promise<string> {
  const redis = await FakeRedis.start();
  cleanups.push(() => redis.close());
  const store = await RedisStore.connect(redis.url, "mg:", { commandTimeoutMs: 100 });
  cleanups.push(() => store.close());
  await redis.treat(command, how);
  const epochFile = join(mkdtempSync(join(tmpdir(), "mg-redis-info-")), "store-epochs.json");
  const err = await store.verify({ integrity: "off", requirePersistence: true, epochFile }).then(() => undefined, (e: Error) => e);
  expect(err).toBeInstanceOf(Error);
  return err!.message;
}

describe("start-up refused when Redis's INFO gives no answer", () => {
  it("INFO persistence with no reply within store.timeout_ms: says it timed out, not that INFO is forbidden", async () => {
    const why = await refusal("info persistence", "never");
    expect(why).toMatch(/cannot tell whether Redis at .* persists its data \(INFO persistence timed out: no reply within 100 ms\)/);
    expect(why).toContain("raise store.timeout_ms");
    expect(why).not.toContain("Allow INFO");
  });

  it("INFO memory with no reply: the same", async () => {
    const why = await refusal("info memory", "never");
    expect(why).toMatch(/cannot tell whether Redis at .* evicts keys \(INFO memory timed out: no reply within 100 ms\)/);
    expect(why).not.toContain("Allow INFO");
  });

  it("INFO refused by the server (an ACL): says so, and to allow it", async () => {
    const why = await refusal("info persistence", "refuse");
    expect(why).toMatch(/\(INFO persistence: NOPERM .*\); budgets' spend lives there\. Allow INFO, or set store\.require_persistence: false/);
  });
});
