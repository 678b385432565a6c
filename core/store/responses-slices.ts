// Work over a Responses conversation's items a slice at a time, with a turn of the event loop between slices. A
// request may carry ~100 000 input items (under max_body_bytes and the JSON container bound): each pass over them
// (minting ids, measuring, serialising for the store) took 0.1-0.7 s, and done in one go, every other client waited
// for all of them together. A list short enough to be one slice is done at once, as before.

/** Items per slice: a slice of small items is about a millisecond's work. */
const SLICE = 1000;

/** A turn of the event loop: other requests' I/O and timers run before the next slice. */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Calls `each` with the bounds of every slice of `length` items, a turn of the event loop between two slices. */
async function inSlices(length: number, each: (start: number, end: number) => void): Promise<void> {
  for (let start = 0; start < length; start += SLICE) {
    if (start) await turn();
    each(start, Math.min(length, start + SLICE));
  }
}

/** items.map(fn), a slice at a time. */
export async function mapInSlices<T, U>(items: readonly T[], fn: (item: T) => U): Promise<U[]> {
  if (items.length <= SLICE) return items.map(fn);
  const out = new Array<U>(items.length);
  await inSlices(items.length, (start, end) => {
    for (let i = start; i < end; i++) out[i] = fn(items[i]!);
  });
  return out;
}

/** JSON.stringify(items), a slice at a time. */
export async function jsonInSlices(items: readonly unknown[]): Promise<string> {
  if (items.length <= SLICE) return JSON.stringify(items);
  const parts: string[] = [];
  // Each slice's array without its brackets: the items and the commas between them, as in the whole array's JSON.
  await inSlices(items.length, (start, end) => void parts.push(JSON.stringify(items.slice(start, end)).slice(1, -1)));
  return `[${parts.join(",")}]`;
}
