// The spool on a disk that fills up (or fails) part way through a write. A full filesystem takes what fits and
// reports ENOSPC only on the next write, so a write can be short without failing: no record may be said to be on
// disk unless all of its line is, and none may be lost — each is either on disk or held in memory until it is.
import { describe, expect, it } from "vitest";
import { cpSync, mkdtempSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Spool } from "./spool.ts";
import { fillingDisk as disk } from "../../test/helpers/filling-disk.ts";

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

describe("Spool on a disk that fills up part way through a write", () => {
  it("a write cut short, then refused: none of its records is said to be on disk; all are held, then written when there is room, none lost", async () => {
    const dir = dirOf();
    const d = disk(2.5 * LINE);
    const s = await Spool.open<string>(dir, "ledger", undefined, undefined, { openSegment: (p) => d.open(p) });
    expect(await turn(s, "abcd", item)).toEqual(["memory", "memory", "memory", "memory"]);
    expect(names(s.heldInMemory())).toEqual(["A", "B", "C", "D"]);
    expect(wholeOnDisk(dir)).toEqual([]); // the two whole lines the disk took are not there twice
    d.room = Infinity;
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
    d.room = Infinity;
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
    d.room = Infinity;
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
