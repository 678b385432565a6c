// Reading a spool file: its lines a chunk at a time from a byte offset (a segment of any size is read back with one
// chunk and one line in memory, never whole, and a reader that stopped part way goes on from where it stopped), and
// a line's record. A last line without its newline (a write a crash cut) is given too: it does not parse, and the
// reader drops it. A cut line with more appended after it (an earlier release went on appending after a write the
// disk cut short) gives the record that ends it.
import { open, type FileHandle } from "node:fs/promises";
import type { Logger } from "../log.ts";

const CHUNK_BYTES = 64 * 1024;

export interface FileLine {
  text: string;
  /** The byte offset just past the line (and its newline): where a later read goes on from. */
  end: number;
  /** It ends with its newline (false: the file's last line, cut). */
  whole: boolean;
}

/**
 * The non-empty lines from byte `from` up to byte `to` (default: the end of the file). Opens the file now, so a
 * missing file rejects here, not while reading; iterate to the end or break out (for await closes the file).
 */
export async function fileLines(path: string, from = 0, to = Infinity): Promise<AsyncGenerator<FileLine>> {
  return read(await open(path, "r"), from, to);
}

async function* read(fh: FileHandle, from: number, to: number): AsyncGenerator<FileLine> {
  try {
    const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
    let pos = from; // the file offset of the next read
    let base = from; // the file offset of `rest`
    let rest = Buffer.alloc(0);
    while (pos < to) {
      const { bytesRead } = await fh.read(chunk, 0, Math.min(CHUNK_BYTES, to - pos), pos);
      if (!bytesRead) break;
      pos += bytesRead;
      const data = rest.length ? Buffer.concat([rest, chunk.subarray(0, bytesRead)]) : chunk.subarray(0, bytesRead);
      let start = 0;
      for (let nl = data.indexOf(10); nl >= 0; nl = data.indexOf(10, start)) {
        if (nl > start) yield { text: data.toString("utf8", start, nl), end: base + nl + 1, whole: true };
        start = nl + 1;
      }
      rest = Buffer.from(data.subarray(start)); // a copy: `chunk` is read into again
      base += start;
    }
    if (rest.length) yield { text: rest.toString("utf8"), end: base + rest.length, whole: false };
  } finally {
    await fh.close();
  }
}

/** A line's item and when it was spooled; undefined for a line a crash cut (never acknowledged: nothing is lost). */
export function parse<T>(text: string, bare: boolean): { item: T; at?: number } | undefined {
  try {
    const r = JSON.parse(text);
    if (bare) return r !== null && typeof r === "object" ? { item: r as T } : undefined;
    return typeof r?.k === "string" ? { item: r.v as T, at: typeof r.t === "number" ? r.t : undefined } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The record of a line read from a file: the line's, or, when a cut record begins it and a whole one follows (a short
 * write, then another append), the one that ends it. That one begins at a later `{"k":` (never inside a string: JSON
 * escapes its quotes), and is the only one of them that parses to the end of the line: any other is either part of
 * the cut record or inside the whole one, and leaves text after it.
 */
export function recordOf<T>(line: FileLine, bare: boolean): { item: T; at?: number } | undefined {
  const r = parse<T>(line.text, bare);
  if (r || bare || !line.whole) return r;
  for (let i = line.text.indexOf('{"k":', 1); i > 0; i = line.text.indexOf('{"k":', i + 1)) {
    const tail = parse<T>(line.text.slice(i), false);
    if (tail) return tail;
  }
  return undefined;
}

/** The records of an adopted file, and when its first was spooled (read through, a chunk at a time). */
export async function count(path: string, bare: boolean, log?: Logger): Promise<{ records: number; at?: number }> {
  let records = 0;
  let at: number | undefined;
  try {
    for await (const line of await fileLines(path)) {
      const r = recordOf(line, bare);
      if (!r) continue;
      records++;
      at ??= r.at;
    }
  } catch (err) {
    log?.error("spool: cannot read an adopted spool file; it is read again when drained", { file: path, error: String(err) });
  }
  return { records, at };
}
