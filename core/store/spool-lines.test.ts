import { describe, expect, it } from "vitest";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { count, fileLines, parse } from "./spool-lines.ts";

const file = (text: string) => {
  const f = join(mkdtempSync(join(tmpdir(), "mg-spool-lines-")), "x.jsonl");
  writeFileSync(f, text);
  return f;
};
const all = async (path: string, from?: number, to?: number) => {
  const got: { text: string; end: number }[] = [];
  for await (const l of await fileLines(path, from, to)) got.push(l);
  return got;
};

describe("spool lines", () => {
  it("reads lines longer than a chunk, with characters split between chunks, and says where each ends in bytes", async () => {
    const long = "é".repeat(70_000); // 140 000 bytes: across three chunks, a two-byte character on a boundary
    const text = `a\n\n${long}\n€z\n`;
    const got = await all(file(text));
    expect(got.map((l) => l.text)).toEqual(["a", long, "€z"]);
    expect(got.map((l) => l.end)).toEqual([2, 3 + 140_001, Buffer.byteLength(text)]);
  });

  it("goes on from a line's end, stops at a byte bound, and gives a last line without its newline", async () => {
    const f = file("one\ntwo\nthree\nfou");
    expect((await all(f, 4)).map((l) => l.text)).toEqual(["two", "three", "fou"]);
    expect((await all(f, 4, 14)).map((l) => l.text)).toEqual(["two", "three"]);
  });

  it("a missing file rejects at open", async () => {
    await expect(fileLines(join(tmpdir(), "mg-no-such-spool-file"))).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("a record is a line that parses with its key; a cut one is no record, and is not counted", async () => {
    expect(parse('{"k":"g1","t":5,"v":{"n":1}}', false)).toEqual({ item: { n: 1 }, at: 5 });
    expect(parse('{"k":"g1","t":5,"v":{"n"', false)).toBeUndefined();
    expect(parse('{"n":1}', true)).toEqual({ item: { n: 1 } });
    expect(await count(file('{"k":"a","t":7,"v":1}\n{"k":"b","t":8,"v":2}\n{"k":"c","t":9,"v'), false)).toEqual({ records: 2, at: 7 });
  });

  it("a cut record with a whole one appended after it (a short write, then another append) still gives the whole one", async () => {
    // The cut one holds a {"k": of its own, and the whole one an object that begins like a record: neither is taken.
    const text = '{"k":"a","t":7,"v":1}\n{"k":"b","t":8,"v":{"k":"in-b","t":1,"v":' + '{"k":"c","t":9,"v":{"k":"in-c","t":2,"v":3}}\n{"k":"d","t":10,"v":4}\n';
    expect(await count(file(text), false)).toEqual({ records: 3, at: 7 });
  });
});
