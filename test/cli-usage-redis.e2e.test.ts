// `model-gateway usage` on a Redis store that does not answer: a bounded wait and a one-line error, never a hang
// or a stack trace (the running gateway's waits are bounded; the command's were not).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { startRedis, type TestRedis } from "./helpers/redis.ts";

const BIN = resolve("bin/model-gateway.mjs");

function usage(url: string): { status: number | null; stdout: string; stderr: string; ms: number } {
  const dir = mkdtempSync(join(tmpdir(), "mg-cli-usage-redis-"));
  writeFileSync(join(dir, "gateway.yaml"), `store: { kind: redis, url: "${url}" }\n`);
  const t0 = Date.now();
  const r = spawnSync(process.execPath, [BIN, "usage", "--config", join(dir, "gateway.yaml")], { encoding: "utf8", timeout: 60_000, env: { ...process.env, LOG_LEVEL: "silent" } });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, ms: Date.now() - t0 };
}

describe("model-gateway usage on Redis", () => {
  let redis: TestRedis;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.stop();
  });

  it("prints the ledger's totals from a Redis that answers", () => {
    const r = usage(redis.url);
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^project\s+model\s+requests/);
  });

  it("a paused Redis: exit 1 within the connect bound, naming the server, no stack trace", () => {
    redis.pause();
    try {
      const r = usage(redis.url);
      expect(r.status).toBe(1);
      expect(r.stderr).toMatch(/store \(redis\): cannot reach Redis at redis:\/\/127\.0\.0\.1:\d+: no answer within 5 s\n$/);
      expect(r.stderr).not.toMatch(/\n\s+at /);
      expect(r.ms).toBeLessThan(15_000); // was: no answer at all (a test harness's timeout killed it)
    } finally {
      redis.resume();
    }
  });

  it("an unreachable Redis: exit 1 with one line, no stack trace", () => {
    const r = usage("redis://127.0.0.1:1");
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^\S*gateway\.yaml:1:1: store \(redis\): cannot reach Redis at redis:\/\/127\.0\.0\.1:1: /);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
  });
});
