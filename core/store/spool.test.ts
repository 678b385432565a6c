import { describe, expect, it, onTestFinished, vi } from "vitest";
import { spawn, spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Spool } from "./spool.ts";
import type { Logger } from "../log.ts";

const dirOf = () => mkdtempSync(join(tmpdir(), "mg-spool-"));
/** The pid of a process that has exited. */
const deadPid = () => spawnSync(process.execPath, ["-e", "0"]).pid!;
const line = (k: string, v: unknown) => JSON.stringify({ k, t: Date.now(), v }) + "\n";
/** This process's spool files in `dir` (<name>.<pid>.<ms>-<n>.jsonl). */
const ownFiles = (dir: string) => readdirSync(dir).filter((f) => new RegExp(`^ledger\\.${process.pid}\\.\\d+-\\d+\\.jsonl$`).test(f));
/** The items of the spool lines in `dir`'s files, file by file in name order. */
const onDisk = (dir: string) => readdirSync(dir).sort().flatMap((f) => readFileSync(join(dir, f), "utf8").trim().split("\n").filter(Boolean).map((l) => JSON.parse(l).v));

describe("Spool", () => {
  it("is on disk when append resolves, and a later process (same pid, e.g. a container's pid 1) finds it", async () => {
    const dir = dirOf();
    const a = await Spool.open<{ n: number }>(dir, "ledger");
    expect(await Promise.all([a.append("g1", { n: 1 }), a.append("g2", { n: 2 })])).toEqual(["durable", "durable"]);
    expect(ownFiles(dir)).toHaveLength(1);
    expect(onDisk(dir)).toEqual([{ n: 1 }, { n: 2 }]);
    // No close(): the process "died". A new one reads the file before writing its own.
    const b = await Spool.open<{ n: number }>(dir, "ledger");
    expect(b.size).toBe(2);
    const got: number[] = [];
    expect(await b.drain(async (batch) => void got.push(...batch.map((x) => x.n)))).toBe(2);
    expect(got).toEqual([1, 2]);
    expect(b.size).toBe(0);
    expect(readdirSync(dir)).toEqual([]);
  });

  it("adopts the file of a process that is gone, once, and removes it after the replay", async () => {
    const dir = dirOf();
    const dead = deadPid();
    writeFileSync(join(dir, `ledger.${dead}.jsonl`), line("g1", "one") + line("g2", "two") + '{"k":"g3","t":1,"v":"thr');
    const s = await Spool.open<string>(dir, "ledger");
    expect(s.size).toBe(2); // the torn last line was never acknowledged
    expect(readdirSync(dir)).toEqual(ownFiles(dir)); // renamed to ours: no other process takes it too
    expect(ownFiles(dir)).toHaveLength(1);
    const got: string[] = [];
    await s.drain(async (b) => void got.push(...b));
    expect(got).toEqual(["one", "two"]);
    expect(readdirSync(dir)).toEqual([]);
  });

  it.runIf(process.platform === "linux")("adopts the file of a process killed but not yet reaped by its parent (a zombie)", async () => {
    const dir = dirOf();
    // sh starts a short child, then becomes `sleep`, which never waits for it: the child stays a zombie.
    const parent = spawn("sh", ["-c", "sleep 0.05 & echo $!; exec sleep 5"], { stdio: ["ignore", "pipe", "ignore"] });
    try {
      const pid = Number(await new Promise<string>((resolve) => parent.stdout!.once("data", (d) => resolve(String(d)))));
      await new Promise((r) => setTimeout(r, 300));
      expect(readFileSync(`/proc/${pid}/stat`, "utf8")).toMatch(/\) Z /);
      writeFileSync(join(dir, `ledger.${pid}.jsonl`), line("g1", "one"));
      const s = await Spool.open<string>(dir, "ledger");
      expect(s.size).toBe(1);
    } finally {
      parent.kill("SIGKILL");
    }
  });

  it("adopts, when asked again, the file of a process that was still running at open", async () => {
    const dir = dirOf();
    const other = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
    const gone = new Promise((r) => other.once("exit", r));
    writeFileSync(join(dir, `ledger.${other.pid}.jsonl`), line("g1", "one") + line("g2", "two"));
    const s = await Spool.open<string>(dir, "ledger");
    expect(s.size).toBe(0);
    expect(await s.adoptGone()).toBe(0);
    other.kill("SIGKILL");
    await gone;
    expect(await s.adoptGone()).toBe(2);
    expect(s.size).toBe(2);
    expect(readdirSync(dir)).toEqual(ownFiles(dir));
  });

  it("leaves the file of a process that still runs alone", async () => {
    const dir = dirOf();
    const other = `ledger.${process.ppid}.jsonl`;
    writeFileSync(join(dir, other), line("x", 1));
    const s = await Spool.open<number>(dir, "ledger");
    expect(s.size).toBe(0);
    expect(readdirSync(dir)).toEqual([other]);
  });

  it("keeps what the sink refused on disk; the next drain goes on from it, in order, without sending again what was taken", async () => {
    const dir = dirOf();
    const s = await Spool.open<string>(dir, "ledger");
    for (const k of ["a", "b", "c", "d", "e"]) await s.append(k, k.toUpperCase());
    let calls = 0;
    const written: string[] = [];
    await expect(s.drain(async (batch) => {
      if (++calls === 2) throw new Error("store down again");
      written.push(...batch);
    }, 2)).rejects.toThrow("store down again");
    expect(written).toEqual(["A", "B"]);
    expect(s.size).toBe(3);
    // The segment stays whole until all of it is written: a crash now replays it from its start (the sink is idempotent).
    expect(onDisk(dir)).toEqual(["A", "B", "C", "D", "E"]);
    await s.append("f", "F");
    await s.drain(async (batch) => void written.push(...batch));
    expect(written).toEqual(["A", "B", "C", "D", "E", "F"]);
    expect(s.oldestAt).toBeUndefined();
    expect(readdirSync(dir)).toEqual([]);
  });

  it("keeps an item in memory when its disk cannot be written, and says so", async () => {
    const dir = dirOf();
    const blocked = join(dir, "not-a-dir");
    writeFileSync(blocked, "");
    const s = await Spool.open<string>(join(blocked, "spool"), "ledger");
    expect(await s.append("g", "kept")).toBe("memory");
    expect(s.size).toBe(1);
    expect(s.heldInMemory()).toEqual(["kept"]);
    expect(await s.saveHeld()).toEqual(["kept"]); // the disk still says no
    const got: string[] = [];
    await s.drain(async (b) => void got.push(...b));
    expect(got).toEqual(["kept"]);
    expect(s.heldInMemory()).toEqual([]);
    expect(s.size).toBe(0);
  });

  it("writes what no disk took first, in order, with the next write the disk takes (after the failure's backoff)", async () => {
    vi.useFakeTimers({ toFake: ["Date", "setTimeout", "clearTimeout"] });
    onTestFinished(() => void vi.useRealTimers());
    const parent = join(dirOf(), "mount");
    writeFileSync(parent, ""); // the spool's directory cannot be made: every write fails
    const dir = join(parent, "spool");
    const s = await Spool.open<string>(dir, "ledger");
    expect(await s.append("a", "A")).toBe("memory");
    expect(await s.append("b", "B")).toBe("memory");
    rmSync(parent); // the disk is back
    await vi.advanceTimersByTimeAsync(1_000); // the first retry: 1 s after the failure
    expect(await s.append("c", "C")).toBe("durable");
    expect(s.heldInMemory()).toEqual([]);
    expect(s.inMemory).toEqual({ records: 0, bytes: 0 });
    expect(onDisk(dir)).toEqual(["A", "B", "C"]);
    const got: string[] = [];
    await s.drain(async (b) => void got.push(...b));
    expect(got).toEqual(["A", "B", "C"]);
  });

  it("saveHeld (a shutdown's last chance) tries the disk again for what it would not take, with nothing new to write", async () => {
    const dir = join(dirOf(), "spool");
    writeFileSync(dir, "");
    const s = await Spool.open<string>(dir, "ledger");
    expect(await s.append("d", "D")).toBe("memory");
    expect(await s.saveHeld()).toEqual(["D"]);
    rmSync(dir);
    expect(await s.saveHeld()).toEqual([]);
    expect(onDisk(dir)).toEqual(["D"]);
    expect(s.size).toBe(1);
  });

  it("an earlier release's Postgres-ledger overflow segments (.seg, one bare item per line) are adopted and replayed", async () => {
    const dir = dirOf();
    const dead = deadPid();
    writeFileSync(join(dir, `pg-ledger.pg-aaaaaaaaaaaa.${dead}.1700000000000-1.seg`), '{"n":1}\n{"n":2}\n{"n":');
    writeFileSync(join(dir, `pg-ledger.pg-aaaaaaaaaaaa.${dead}.adopted-1700000000001-2.seg`), '{"n":3}\n');
    const s = await Spool.open<{ n: number }>(dir, "pg-ledger", undefined, "pg-aaaaaaaaaaaa");
    expect(s.size).toBe(3);
    expect(s.oldestAt).toBe(1700000000000);
    const got: number[] = [];
    expect(await s.drain(async (b) => void got.push(...b.map((x) => x.n)))).toBe(3);
    expect(got).toEqual([1, 2, 3]);
    expect(readdirSync(dir)).toEqual([]);
  });
});

const range = (n: number, from = 0) => Array.from({ length: n }, (_, i) => from + i);

/** Append items `from`..`from + n - 1` (key g<i>) in turns of 500 appends, each turn one write. */
async function spoolMany<T>(s: Spool<T>, n: number, item: (i: number) => T, from = 0): Promise<void> {
  for (let i = from; i < from + n; i += 500) await Promise.all(range(Math.min(500, from + n - i), i).map((j) => s.append(`g${j}`, item(j))));
}

describe("Spool during a long outage", () => {
  it("holds none of the records it spooled in memory however many wait; a replay holds one batch at a time, in order", async () => {
    const dir = dirOf();
    const s = await Spool.open<{ n: number; pad: string }>(dir, "ledger", undefined, undefined, { segmentRecords: 1000 });
    const N = 5000;
    await spoolMany(s, N, (n) => ({ n, pad: "x".repeat(600) })); // ~ a ledger record's size
    expect(s.size).toBe(N);
    expect(s.inMemory).toEqual({ records: 0, bytes: 0 });
    expect(ownFiles(dir)).toHaveLength(5);
    let most = 0;
    const got: number[] = [];
    expect(await s.drain(async (batch) => {
      most = Math.max(most, s.inMemory.records);
      got.push(...batch.map((x) => x.n));
    }, 100)).toBe(N);
    expect(most).toBe(100);
    expect(got).toEqual(range(N));
    expect(s.inMemory).toEqual({ records: 0, bytes: 0 });
    expect(s.size).toBe(0);
  });

  it("records spooled while a replay runs are replayed after the ones before them", async () => {
    const s = await Spool.open<number>(dirOf(), "ledger", undefined, undefined, { segmentRecords: 100 });
    await spoolMany(s, 300, (n) => n);
    const got: number[] = [];
    let first = true;
    await s.drain(async (batch) => {
      if (first) await Promise.all([s.append("late1", 1000), s.append("late2", 1001)]);
      first = false;
      got.push(...batch);
    }, 50);
    expect(got).toEqual([...range(300), 1000, 1001]);
    expect(s.size).toBe(0);
  });

  it("the segment being appended to fills up while a drain reads it: the drain goes on from where it stopped, each record once", async () => {
    const dir = dirOf();
    const s = await Spool.open<number>(dir, "ledger", undefined, undefined, { segmentRecords: 10 });
    await spoolMany(s, 5, (n) => n);
    const got: number[] = [];
    let first = true;
    await s.drain(async (batch) => {
      if (first) await spoolMany(s, 10, (n) => n, 100); // the segment now holds 15: closed as full
      first = false;
      got.push(...batch);
    }, 2);
    expect(got).toEqual([...range(5), ...range(10, 100)]);
    expect(s.size).toBe(0);
    expect(readdirSync(dir)).toEqual([]);
  });

  it("a crash part way through a replay: the next process writes every record, each once, sending again only the rest of one segment", async () => {
    const dir = dirOf();
    const s = await Spool.open<number>(dir, "ledger", undefined, undefined, { segmentRecords: 1000 });
    await spoolMany(s, 3500, (n) => n);
    // The store: it keeps a record once per key, as every store's ledger write does; `sent` counts what it was sent.
    const stored = new Set<number>();
    const sent = new Map<number, number>();
    const store = async (batch: number[]) => {
      for (const n of batch) {
        stored.add(n);
        sent.set(n, (sent.get(n) ?? 0) + 1);
      }
    };
    const crashed = dirOf();
    let calls = 0;
    await expect(s.drain(async (batch) => {
      await store(batch);
      // The 13th batch is in the store when the power goes: the disk as it is then is what the next process finds.
      if (++calls === 13) {
        cpSync(dir, crashed, { recursive: true });
        throw new Error("power cut");
      }
    }, 100)).rejects.toThrow("power cut");
    const dead = deadPid();
    for (const f of readdirSync(crashed)) renameSync(join(crashed, f), join(crashed, f.replace(`.${process.pid}.`, `.${dead}.`)));

    const next = await Spool.open<number>(crashed, "ledger");
    expect(next.size).toBe(2500); // the first segment was written whole, and deleted
    const replayed: number[] = [];
    await next.drain(async (batch) => {
      replayed.push(...batch);
      await store(batch);
    }, 100);
    expect(replayed).toEqual(range(2500, 1000)); // in order
    expect([...stored].sort((a, b) => a - b)).toEqual(range(3500)); // none lost
    // Sent twice: only what the interrupted segment had sent before the crash (the store counts them once).
    expect([...sent].filter(([, times]) => times > 1).map(([n]) => n)).toEqual(range(300, 1000));
    expect(readdirSync(crashed)).toEqual([]);
  });
});

/** A logger that keeps its warn lines. */
function warnings(): { log: Logger; warns: { msg: string; fields?: Record<string, unknown> }[] } {
  const warns: { msg: string; fields?: Record<string, unknown> }[] = [];
  const none = () => {};
  return { warns, log: { debug: none, info: none, error: none, infoJson: none, warn: (msg: string, fields?: Record<string, unknown>) => void warns.push({ msg, fields }), enabled: () => true } as unknown as Logger };
}

/** Spool `items` as a process on `store` would, then let that process "die": its files now carry a gone pid. */
async function spooledByGoneProcess(dir: string, store: string | undefined, items: Record<string, string>): Promise<number> {
  const s = await Spool.open<string>(dir, "ledger", undefined, store);
  for (const [k, v] of Object.entries(items)) await s.append(k, v);
  await s.close();
  const dead = deadPid();
  for (const f of readdirSync(dir)) if (f.includes(`.${process.pid}.`)) renameSync(join(dir, f), join(dir, f.replace(`.${process.pid}.`, `.${dead}.`)));
  return dead;
}

describe("Spool shared by gateways on different stores", () => {
  const A = "sqlite-aaaaaaaaaaaa";
  const B = "sqlite-bbbbbbbbbbbb";

  it("adopts only the records written for its own store; another store's are left (said once, naming the dir) for that store", async () => {
    const dir = dirOf();
    await spooledByGoneProcess(dir, A, { g1: "acme-1", g2: "acme-2" });
    const left = readdirSync(dir);
    const { log, warns } = warnings();
    const b = await Spool.open<string>(dir, "ledger", log, B);
    expect(b.size).toBe(0);
    expect(await b.adoptGone()).toBe(0); // a writer tick looks again: still not ours
    expect(await b.drain(async () => {})).toBe(0);
    expect(readdirSync(dir)).toEqual(left);
    expect(warns).toHaveLength(1);
    expect(warns[0]!.fields).toMatchObject({ dir, files: left });
    // The gateway on store A, started on the same spool_dir, replays them.
    const a = await Spool.open<string>(dir, "ledger", undefined, A);
    const got: string[] = [];
    await a.drain(async (batch) => void got.push(...batch));
    expect(got).toEqual(["acme-1", "acme-2"]);
    expect(readdirSync(dir)).toEqual([]);
  });

  it("adopts a file written before files named their store while no other store's file is in the dir", async () => {
    const dir = dirOf();
    const dead = deadPid();
    writeFileSync(join(dir, `ledger.${dead}.jsonl`), line("g1", "old"));
    const b = await Spool.open<string>(dir, "ledger", undefined, B);
    expect(b.size).toBe(1);
  });

  it("leaves a file that does not name its store when the dir is shared with another store", async () => {
    const dir = dirOf();
    await spooledByGoneProcess(dir, A, { g1: "acme-1" });
    const dead = deadPid();
    writeFileSync(join(dir, `ledger.${dead}.jsonl`), line("g9", "whose?"));
    const { log, warns } = warnings();
    const b = await Spool.open<string>(dir, "ledger", log, B);
    expect(b.size).toBe(0);
    expect(readdirSync(dir)).toContain(`ledger.${dead}.jsonl`);
    expect(warns.map((w) => w.fields?.files).flat()).toContain(`ledger.${dead}.jsonl`);
  });

  it("a memory store adopts nothing", async () => {
    const dir = dirOf();
    writeFileSync(join(dir, `ledger.${deadPid()}.jsonl`), line("g1", "old"));
    const m = await Spool.open<string>(dir, "ledger", undefined, "memory-000000000000");
    expect(m.size).toBe(0);
  });
});
