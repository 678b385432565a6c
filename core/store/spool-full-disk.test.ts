// The spool on a disk that fills up (or fails) part way through a write. A full filesystem takes what fits and
// reports ENOSPC only on the next write, so a write can be short without failing: no record may be said to be on
// disk unless all of its line is, and none may be lost — each is either on disk or held in memory until it is.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { cpSync, mkdtempSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Spool } from "./spool.ts";
import { fillingDisk as disk } from "../../test/helpers/filling-disk.ts";
import { captureLogger } from "../../test/helpers/log-capture.ts";

const dirOf = () => mkdtempSync(join(tmpdir(), "mg-spool-full-"));
const deadPid = () => spawnSync(process.execPath, ["-e", "0"]).pid!;

/** Items named by their first letter, padded: each one's spool line is LINE bytes. */
const PAD = 60;
const item = (k: string) => k.toUpperCase() + "x".repeat(PAD);
const LINE = Buffer.byteLength(JSON.stringify({ k: "a", t: Date.now(), v: item("a") }) + "\n");
const names = (items: string[]) => items.map((i) => i[0]);

/** The records whole in `dir`'s spool files (a cut line is none), file by file in name order. */
function wholeOnDisk(dir: string): string[] {
  const got: string[] = [];
  for (const f of readdirSync(dir).sort()) {
    for (const l of readFileSync(join(dir, f), "utf8").split("\n")) {
      try {
        got.push(JSON.parse(l).v[0]);
      } catch {
        // cut
      }
    }
  }
  return got;
}

/** Append `keys` in one event-loop turn (one write), and say where each was kept. */
const turn = <T>(s: Spool<T>, keys: string, f: (k: string) => T) => Promise.all([...keys].map((k) => s.append(k, f(k))));

async function drained(s: Spool<string>): Promise<string[]> {
  const got: string[] = [];
  await s.drain(async (b) => void got.push(...b));
  return got;
}

/** After a failed write the spool tries the disk again only after a backoff (1 s first): the clock is the test's. */
const FIRST_RETRY_MS = 1_000;
const fakeClock = () => vi.useFakeTimers({ toFake: ["Date", "setTimeout", "clearTimeout"] });
/** The disk has room again: let the backoff run out (its retry writes what is held, before any later append). */
async function roomAgain(d: ReturnType<typeof disk>, ms = FIRST_RETRY_MS): Promise<void> {
  d.room = Infinity;
  await vi.advanceTimersByTimeAsync(ms);
}

describe("Spool on a disk that fills up part way through a write", () => {
  beforeEach(fakeClock);
  afterEach(() => vi.useRealTimers());

  it("a write cut short, then refused: none of its records is said to be on disk; all are held, then written when there is room, none lost", async () => {
    const dir = dirOf();
    const d = disk(2.5 * LINE);
    const s = await Spool.open<string>(dir, "ledger", undefined, undefined, { openSegment: (p) => d.open(p) });
    expect(await turn(s, "abcd", item)).toEqual(["memory", "memory", "memory", "memory"]);
    expect(names(s.heldInMemory())).toEqual(["A", "B", "C", "D"]);
    expect(wholeOnDisk(dir)).toEqual([]); // the two whole lines the disk took are not there twice
    await roomAgain(d);
    expect(await turn(s, "e", item)).toEqual(["durable"]);
    expect(s.heldInMemory()).toEqual([]);
    expect(names(await drained(s))).toEqual(["A", "B", "C", "D", "E"]);
    expect(readdirSync(dir)).toEqual([]);
  });

  it("the disk fills in the middle of a turn's write: what was said to be on disk is whole there, a crash then replays it, and the rest is held", async () => {
    const dir = dirOf();
    const d = disk(2.5 * LINE);
    const s = await Spool.open<string>(dir, "ledger", undefined, undefined, { openSegment: (p) => d.open(p) });
    const kept: Record<string, string> = {};
    for (const keys of ["ab", "cd", "e"]) (await turn(s, keys, item)).forEach((k, i) => (kept[keys[i]!] = k));
    expect(kept).toEqual({ a: "durable", b: "durable", c: "memory", d: "memory", e: "memory" });
    const durable = Object.keys(kept).filter((k) => kept[k] === "durable").map((k) => k.toUpperCase());
    expect(wholeOnDisk(dir)).toEqual(durable);

    // The process dies now: the next one replays what is on disk; with what was held (and said so), that is every record.
    const crashed = dirOf();
    cpSync(dir, crashed, { recursive: true });
    const dead = deadPid();
    for (const f of readdirSync(crashed)) renameSync(join(crashed, f), join(crashed, f.replace(`.${process.pid}.`, `.${dead}.`)));
    const next = await Spool.open<string>(crashed, "ledger");
    expect([...names(await drained(next)), ...names(s.heldInMemory())]).toEqual(["A", "B", "C", "D", "E"]);

    // It lives on instead: room again, and every record is written, in order, each once.
    await roomAgain(d);
    expect(await turn(s, "f", item)).toEqual(["durable"]);
    expect(names(await drained(s))).toEqual(["A", "B", "C", "D", "E", "F"]);
  });

  it("a write the disk takes in pieces (short, with room left) is finished before the records are said to be on disk", async () => {
    const dir = dirOf();
    const d = disk(Infinity, { piece: 7 });
    const s = await Spool.open<string>(dir, "ledger", undefined, undefined, { openSegment: (p) => d.open(p) });
    expect(await turn(s, "abc", item)).toEqual(["durable", "durable", "durable"]);
    expect(wholeOnDisk(dir)).toEqual(["A", "B", "C"]);
    expect(names(await drained(s))).toEqual(["A", "B", "C"]);
  });

  it("a failed fsync: that turn's records are held and taken back out of the file, so a replay sends each once", async () => {
    const dir = dirOf();
    const d = disk(Infinity);
    const s = await Spool.open<string>(dir, "ledger", undefined, undefined, { openSegment: (p) => d.open(p) });
    expect(await turn(s, "ab", item)).toEqual(["durable", "durable"]);
    d.failSyncs = 1;
    expect(await turn(s, "c", item)).toEqual(["memory"]);
    expect(wholeOnDisk(dir)).toEqual(["A", "B"]);
    await vi.advanceTimersByTimeAsync(FIRST_RETRY_MS);
    expect(await turn(s, "d", item)).toEqual(["durable"]);
    expect(names(await drained(s))).toEqual(["A", "B", "C", "D"]);
  });

  it("a cut write that cannot be taken back out of the file: nothing is appended after the cut line, and no record is lost", async () => {
    const dir = dirOf();
    const d = disk(2.5 * LINE);
    d.failTruncate = true;
    const s = await Spool.open<string>(dir, "ledger", undefined, undefined, { openSegment: (p) => d.open(p) });
    expect(await turn(s, "ab", item)).toEqual(["durable", "durable"]);
    expect(await turn(s, "cd", item)).toEqual(["memory", "memory"]);
    await roomAgain(d);
    expect(await turn(s, "e", item)).toEqual(["durable"]);
    const files = readdirSync(dir).sort();
    expect(files).toHaveLength(2); // the cut segment was closed at the cut: E began a new one
    expect(readFileSync(join(dir, files[0]!), "utf8")).not.toMatch(/\n$/);
    expect(names(await drained(s))).toEqual(["A", "B", "C", "D", "E"]);
  });

  it("a file an earlier release went on appending to after a write the disk cut short: every whole record is replayed", async () => {
    const dir = dirOf();
    const line = (k: string) => JSON.stringify({ k, t: 1, v: item(k) });
    const cut = line("b").slice(0, 30);
    writeFileSync(join(dir, `ledger.${deadPid()}.jsonl`), `${line("a")}\n${cut}${line("c")}\n${line("d")}\n`);
    const s = await Spool.open<string>(dir, "ledger");
    expect(s.size).toBe(3);
    expect(names(await drained(s))).toEqual(["A", "C", "D"]);
  });
});

describe("Spool on a disk that stays full", () => {
  beforeEach(fakeClock);
  afterEach(() => vi.useRealTimers());

  /** A full disk whose segment opens (one per write tried: a failed write closes its segment) are counted. */
  async function fullSpool() {
    const dir = dirOf();
    const d = disk(0);
    const tries = { n: 0 };
    const { logger, log } = captureLogger("info");
    const s = await Spool.open<string>(dir, "ledger", logger, undefined, { openSegment: (p) => (tries.n++, d.open(p)) });
    const refusals = () => log.records().filter((l) => /cannot write to disk/.test(l.msg));
    return { dir, d, s, tries, refusals };
  }

  it("appends, one request each, try the disk once per backoff (1 s, doubling), not once each, and say so once per try; each is still held, none lost", async () => {
    const { dir, d, s, tries, refusals } = await fullSpool();
    const keys = "abcdefghijklmnopqrstuvwxyz";
    for (const k of keys.slice(0, 13)) expect(await s.append(k, item(k))).toBe("memory");
    expect(tries.n).toBe(1);
    expect(refusals()).toHaveLength(1);

    await vi.advanceTimersByTimeAsync(FIRST_RETRY_MS); // the retry: once, with nothing appended
    await s.append("n", item("n")); // resolves after the retry's write; held, not a try of its own
    expect(tries.n).toBe(2);
    for (const k of keys.slice(14)) expect(await s.append(k, item(k))).toBe("memory");
    expect(tries.n).toBe(2);
    expect(refusals()).toHaveLength(2);
    expect(refusals()[1]).toMatchObject({ level: 50, held: 13, retryInMs: 2 * FIRST_RETRY_MS });

    await vi.advanceTimersByTimeAsync(FIRST_RETRY_MS); // the wait doubled: not yet
    expect(tries.n).toBe(2);
    await roomAgain(d, FIRST_RETRY_MS);
    await s.saveHeld(); // the retry's write is done
    expect(tries.n).toBe(3);
    expect(s.heldInMemory()).toEqual([]);
    expect(wholeOnDisk(dir)).toEqual(names([...keys].map(item)));
    expect(names(await drained(s))).toEqual(names([...keys].map(item)));
  });

  it("the wait is at most 30 s, and once the disk takes a write the next failure waits 1 s again", async () => {
    const { d, s, tries } = await fullSpool();
    await s.append("a", item("a"));
    for (const wait of [1, 2, 4, 8, 16, 30, 30]) {
      await vi.advanceTimersByTimeAsync(wait * 1000 - 1);
      expect(await s.append("w", item("w"))).toBe("memory"); // resolves after any write under way
      const before = tries.n;
      await vi.advanceTimersByTimeAsync(1);
      await s.append("w", item("w"));
      expect(tries.n).toBe(before + 1);
    }
    expect(tries.n).toBe(8);
    await roomAgain(d, 30_000);
    await s.saveHeld();
    expect(tries.n).toBe(9);
    d.room = 0;
    await s.append("b", item("b")); // appended to the segment the retry began: no open
    await s.append("c", item("c"));
    expect(tries.n).toBe(9);
    await vi.advanceTimersByTimeAsync(FIRST_RETRY_MS);
    expect(tries.n).toBe(10);
  });

  it("shutdown tries the disk at once, backoff or not", async () => {
    const { d, s, tries } = await fullSpool();
    await s.append("a", item("a"));
    d.room = Infinity;
    expect(await s.saveHeld()).toEqual([]);
    expect(tries.n).toBe(2);
    await s.close();
  });
});
