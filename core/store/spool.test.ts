import { describe, expect, it } from "vitest";
import { spawn, spawnSync } from "node:child_process";
import { appendFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Spool } from "./spool.ts";
import type { Logger } from "../log.ts";

const dirOf = () => mkdtempSync(join(tmpdir(), "mg-spool-"));
/** The pid of a process that has exited. */
const deadPid = () => spawnSync(process.execPath, ["-e", "0"]).pid!;
const line = (k: string, v: unknown) => JSON.stringify({ k, t: Date.now(), v }) + "\n";

describe("Spool", () => {
  it("is on disk when append resolves, and a later process (same pid, e.g. a container's pid 1) finds it", async () => {
    const dir = dirOf();
    const a = await Spool.open<{ n: number }>(dir, "ledger");
    expect(await Promise.all([a.append("g1", { n: 1 }), a.append("g2", { n: 2 })])).toEqual(["durable", "durable"]);
    const file = join(dir, `ledger.${process.pid}.jsonl`);
    expect(readFileSync(file, "utf8").trim().split("\n")).toHaveLength(2);
    // No close(): the process "died". A new one reads the file before writing its own.
    const b = await Spool.open<{ n: number }>(dir, "ledger");
    expect(b.size).toBe(2);
    const got: number[] = [];
    expect(await b.drain(async (batch) => void got.push(...batch.map((x) => x.n)))).toBe(2);
    expect(got).toEqual([1, 2]);
    expect(b.size).toBe(0);
    expect(existsSync(file)).toBe(false);
  });

  it("adopts the file of a process that is gone, once, and removes it after the replay", async () => {
    const dir = dirOf();
    const dead = deadPid();
    writeFileSync(join(dir, `ledger.${dead}.jsonl`), line("g1", "one") + line("g2", "two") + '{"k":"g3","t":1,"v":"thr');
    const s = await Spool.open<string>(dir, "ledger");
    expect(s.size).toBe(2); // the torn last line was never acknowledged
    expect(readdirSync(dir)).toEqual([`ledger.${process.pid}.jsonl`]);
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
    expect(readdirSync(dir)).toEqual([`ledger.${process.pid}.jsonl`]);
  });

  it("leaves the file of a process that still runs alone", async () => {
    const dir = dirOf();
    const other = `ledger.${process.ppid}.jsonl`;
    writeFileSync(join(dir, other), line("x", 1));
    const s = await Spool.open<number>(dir, "ledger");
    expect(s.size).toBe(0);
    expect(readdirSync(dir)).toEqual([other]);
  });

  it("keeps what the sink refused, in order, on disk, and replays each key once", async () => {
    const dir = dirOf();
    const s = await Spool.open<string>(dir, "ledger");
    for (const k of ["a", "b", "c", "d", "e"]) await s.append(k, k.toUpperCase());
    await s.append("b", "B2"); // the same key again: one item, the newest
    let calls = 0;
    const written: string[] = [];
    await expect(s.drain(async (batch) => {
      if (++calls === 2) throw new Error("store down again");
      written.push(...batch);
    }, 2)).rejects.toThrow("store down again");
    expect(written).toEqual(["A", "C"]);
    expect(s.size).toBe(3);
    const onDisk = readFileSync(join(dir, `ledger.${process.pid}.jsonl`), "utf8").trim().split("\n").map((l) => JSON.parse(l).v);
    expect(onDisk).toEqual(["D", "E", "B2"]);
    await s.drain(async (batch) => void written.push(...batch));
    expect(written).toEqual(["A", "C", "D", "E", "B2"]);
    expect(s.oldestAt).toBeUndefined();
  });

  it("keeps an item in memory when its disk cannot be written, and says so", async () => {
    const dir = dirOf();
    const blocked = join(dir, "not-a-dir");
    writeFileSync(blocked, "");
    const s = await Spool.open<string>(join(blocked, "spool"), "ledger");
    expect(await s.append("g", "kept")).toBe("memory");
    expect(s.size).toBe(1);
    const got: string[] = [];
    await s.drain(async (b) => void got.push(...b));
    expect(got).toEqual(["kept"]);
  });

  it("writes once more the whole spool after a failed write, once the disk allows", async () => {
    const dir = dirOf();
    const s = await Spool.open<string>(dir, "ledger");
    const file = join(dir, `ledger.${process.pid}.jsonl`);
    // Break the file's directory entry: make the spool path a directory so the append's open fails.
    (s as any).fh = undefined;
    const { mkdirSync, rmSync } = await import("node:fs");
    mkdirSync(file);
    expect(await s.append("a", "A")).toBe("memory");
    rmSync(file, { recursive: true });
    expect(await s.append("b", "B")).toBe("durable");
    appendFileSync(file, ""); // still a file
    expect(readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l).v)).toEqual(["A", "B"]);
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
