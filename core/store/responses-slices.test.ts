import { describe, expect, it } from "vitest";
import { jsonInSlices, mapInSlices } from "./responses-slices.ts";

const items = (n: number) => Array.from({ length: n }, (_, i) => ({ type: "message", role: i % 2 ? "assistant" : "user", content: `hé ${i} "q"`, extra: i % 7 ? undefined : null }));

/** Whether other work queued before `work` (an immediate, as a socket's read would be) ran before `work` was done. */
async function otherWorkRan(work: () => Promise<unknown>): Promise<boolean> {
  let ran = false;
  const other = setImmediate(() => (ran = true));
  await work();
  clearImmediate(other);
  return ran;
}

describe("jsonInSlices", () => {
  it("is JSON.stringify of the list, short or long (undefined items as null, as in an array)", async () => {
    for (const list of [[], items(3), items(1000), items(1001), items(25_000), [...items(1500), undefined, () => 1]]) {
      expect(await jsonInSlices(list)).toBe(JSON.stringify(list));
    }
  });

  it("gives other work a turn while serialising a long list, not while serialising a short one", async () => {
    const long = items(3000);
    expect(await otherWorkRan(() => jsonInSlices(long))).toBe(true);
    expect(await otherWorkRan(() => jsonInSlices(items(10)))).toBe(false);
  });
});

describe("mapInSlices", () => {
  it("is items.map(fn), short or long", async () => {
    for (const list of [[], items(3), items(1001), items(25_000)]) {
      const fn = (i: { content: string }) => i.content.length;
      expect(await mapInSlices(list, fn)).toEqual(list.map(fn));
    }
  });

  it("gives other work a turn while mapping a long list", async () => {
    const long = items(3000);
    expect(await otherWorkRan(() => mapInSlices(long, (i) => JSON.stringify(i)))).toBe(true);
  });
});
