import { describe, expect, it } from "vitest";
import { SessionTable, type TableSession } from "./mcp-session-table.ts";

let made = 0;
function session(keyId: string, projectId = `project-${keyId}`): TableSession & { closed: boolean } {
  const s = {
    id: `s${++made}`, projectId, keyId, busy: 0, lastUsed: Date.now(), closed: false,
    async close() { s.closed = true; },
  };
  return s;
}

function table(maxSessions: number) {
  return new SessionTable<ReturnType<typeof session>>(() => ({ maxSessions, idleMs: 1_800_000 }));
}

const open = (t: ReturnType<typeof table>, keyId: string, n: number) =>
  Array.from({ length: n }, () => { const s = session(keyId); t.add(s); return s; });

describe("SessionTable: a full table", () => {
  it("closes the flooding key's oldest sessions, never the other key's one", () => {
    const t = table(5);
    const [theirs] = open(t, "b", 1);
    const flood = open(t, "a", 10);
    expect(t.size).toBe(5);
    expect(theirs!.closed).toBe(false);
    expect(t.get(theirs!.id!)).toBe(theirs);
    expect(flood.map((s) => s.closed)).toEqual([true, true, true, true, true, true, false, false, false, false]);
  });

  it("takes the key holding the most, even when another key's session has been idle longer", () => {
    const t = table(4);
    const [c] = open(t, "c", 1);
    const b = open(t, "b", 2);
    const a = open(t, "a", 1);
    t.touch(b[0]!); // b's first is now its newest
    open(t, "d", 1); // b holds 2, every other key 1
    expect([c, ...b, ...a].map((s) => s!.closed)).toEqual([false, false, true, false]);
  });

  it("when every key holds one, closes the one idle longest, in use order", () => {
    const t = table(3);
    const [k0, k1, k2] = ["k0", "k1", "k2"].map((k) => open(t, k, 1)[0]!);
    t.touch(k0!);
    const [k3] = open(t, "k3", 1);
    expect([k0, k1, k2, k3].map((s) => s!.closed)).toEqual([false, true, false, false]);
  });

  it("among keys holding as many, closes the idle-longest of theirs", () => {
    const t = table(4);
    const a = open(t, "a", 2);
    const b = open(t, "b", 2);
    t.touch(a[0]!);
    t.touch(a[1]!); // b's are idle longest now
    const [c] = open(t, "c", 1);
    expect([...a, ...b, c].map((s) => s!.closed)).toEqual([false, false, true, false, false]);
  });

  it("never closes a busy session: the largest key's idle one goes, or the next largest key's", () => {
    const t = table(3);
    const a = open(t, "a", 2);
    a[0]!.busy = 1;
    open(t, "b", 1);
    const [c] = open(t, "c", 1);
    expect(a.map((s) => s.closed)).toEqual([false, true]);

    a[0]!.busy = 1; // a's only one left is busy; b and c hold one each, b's idle longest
    const [d] = open(t, "d", 1);
    expect([c!.closed, d!.closed, a[0]!.closed]).toEqual([false, false, false]);
    expect(t.size).toBe(3);
  });

  it("counts a key's sessions down as they end, so it is no longer the largest", () => {
    const t = table(3);
    const a = open(t, "a", 2);
    const [b] = open(t, "b", 1);
    t.remove(a[0]!);
    t.touch(b!); // a's remaining one is idle longest, and a holds as many as b
    open(t, "c", 1);
    open(t, "d", 1);
    expect([a[1]!.closed, b!.closed]).toEqual([true, false]);
    expect(t.size).toBe(3);
  });

  it("keeps the same key's sessions of two projects apart", () => {
    const t = table(2);
    const mine = session("k", "p1");
    t.add(mine);
    t.add(session("k", "p2"));
    t.add(session("k", "p2"));
    expect(mine.closed).toBe(false);
  });
});
