import { describe, expect, it } from "vitest";
import { availableParallelism } from "node:os";
import { parseWorkers, storeRefusal, workerEnv } from "./cluster.ts";

describe("--workers", () => {
  it("defaults to 1, takes a count or auto (one per core), refuses anything else", () => {
    expect(parseWorkers(undefined)).toBe(1);
    expect(parseWorkers("3")).toBe(3);
    expect(parseWorkers("auto")).toBe(availableParallelism());
    for (const bad of ["0", "-1", "1.5", "two", ""]) expect(() => parseWorkers(bad)).toThrow(/--workers must be/);
  });

  it("more than one worker needs the Redis store", () => {
    expect(storeRefusal("sqlite", 1)).toBeUndefined();
    expect(storeRefusal("redis", 4)).toBeUndefined();
    expect(storeRefusal("sqlite", 2)).toMatch(/--workers 2 needs store: \{ kind: redis \}/);
    expect(storeRefusal("memory", 2)).toMatch(/the memory store keeps/);
  });

  it("workers get two malloc arenas unless the operator set MALLOC_ARENA_MAX, and the primary's signing secret", () => {
    expect(workerEnv("s".repeat(64), {})).toEqual({ MG_WORKER: "1", MALLOC_ARENA_MAX: "2", MG_WORKER_SIGNING_SECRET: "s".repeat(64) });
    expect(workerEnv("s".repeat(64), { MALLOC_ARENA_MAX: "8" })).toMatchObject({ MALLOC_ARENA_MAX: "8" });
  });
});
