import { describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, renameSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SpoolSegments } from "./spool-segments.ts";

const dir = () => mkdtempSync(join(tmpdir(), "mg-seg-"));

describe("spool segments", () => {
  it("keeps records on disk in sealed segments; a failed drain keeps the segment whole; the next drain writes everything", async () => {
    const d = dir();
    const s = await SpoolSegments.open<{ n: number }>(d, "pg-ledger", undefined, 10);
    expect(await Promise.all(Array.from({ length: 35 }, (_, n) => s.append({ n })))).toEqual(Array(35).fill("durable"));
    expect(s.size).toBe(35);
    expect(s.oldestAt).toBeLessThanOrEqual(Date.now());
    expect(readdirSync(d).filter((f) => f.endsWith(".seg")).length).toBeGreaterThanOrEqual(1);
    const seen: number[] = [];
    let calls = 0;
    // The sink fails on its third batch: what it had taken stays counted as waiting (the segment is redone whole).
    await expect(s.drain(async (b) => {
      if (++calls === 3) throw new Error("sink down");
      seen.push(...b.map((x) => x.n));
    }, 4)).rejects.toThrow("sink down");
    expect(s.size).toBeGreaterThan(0);
    const again: number[] = [];
    await s.drain(async (b) => { again.push(...b.map((x) => x.n)); }, 4);
    expect(new Set([...seen, ...again])).toEqual(new Set(Array.from({ length: 35 }, (_, n) => n)));
    expect(s.size).toBe(0);
    expect(s.oldestAt).toBeUndefined();
    expect(readdirSync(d).filter((f) => f.endsWith(".seg"))).toEqual([]);
  });

  it("a process that was stopped leaves its segments to the next one on the same directory", async () => {
    const d = dir();
    const first = await SpoolSegments.open<{ n: number }>(d, "pg-ledger", undefined, 7);
    await Promise.all(Array.from({ length: 20 }, (_, n) => first.append({ n })));
    await first.close();
    const next = await SpoolSegments.open<{ n: number }>(d, "pg-ledger", undefined, 7);
    expect(next.size).toBe(20);
    const got: number[] = [];
    expect(await next.drain(async (b) => { got.push(...b.map((x) => x.n)); }, 6)).toBe(20);
    expect(got.sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, n) => n));
    expect(readdirSync(d)).toEqual([]);
  });
  it("a process on another store (a shared spool_dir) leaves the segments alone; a process on their store writes them", async () => {
    const d = dir();
    const first = await SpoolSegments.open<{ n: number }>(d, "pg-ledger", undefined, 7, "pg-aaaaaaaaaaaa");
    await Promise.all(Array.from({ length: 10 }, (_, n) => first.append({ n })));
    await first.close();
    // That process is gone now.
    const dead = spawnSync(process.execPath, ["-e", "0"]).pid!;
    for (const f of readdirSync(d)) renameSync(join(d, f), join(d, f.replace(`.${process.pid}.`, `.${dead}.`)));
    const left = readdirSync(d);
    expect(left.length).toBeGreaterThan(0);
    const other = await SpoolSegments.open<{ n: number }>(d, "pg-ledger", undefined, 7, "pg-bbbbbbbbbbbb");
    await other.adopt();
    expect(other.size).toBe(0);
    expect(await other.drain(async () => {})).toBe(0);
    expect(readdirSync(d)).toEqual(left);
    const same = await SpoolSegments.open<{ n: number }>(d, "pg-ledger", undefined, 7, "pg-aaaaaaaaaaaa");
    expect(same.size).toBe(10);
  });
});
