// How much a request body may make JSON.parse build, counted on the raw bytes as they arrive and before anything
// is parsed. Objects and arrays are what cost: 3.5 M empty arrays (`[[],[],…]`, 10 MiB) took ~600 ms of one
// blocked event loop and ~150 MB of heap to parse, and the walk after it more; a 10 MiB string costs ~10 ms.
// A body over either count is refused at the chunk that crosses it, so it is neither buffered nor parsed.

/** Far above any real request (a long agent transcript with tools has a few thousand); ~20 ms to parse. */
export const MAX_JSON_CONTAINERS = 100_000;
/** Array elements and object members (counted as separating commas): ~20 ms to parse as numbers. */
export const MAX_JSON_MEMBERS = 1_000_000;

const QUOTE = 0x22, BACKSLASH = 0x5c, COMMA = 0x2c, OPEN_ARRAY = 0x5b, OPEN_OBJECT = 0x7b;

export type BudgetExceeded = "containers" | "members";

/**
 * Counts `{`, `[` and `,` outside strings, chunk by chunk. Strings (most of a real body: prompts, base64 images)
 * are skipped with indexOf rather than byte by byte. Invalid JSON is counted as well as it can be and left to
 * JSON.parse to refuse.
 */
export class JsonBudget {
  containers = 0;
  members = 0;
  private inString = false;
  /** Inside a string, the previous byte was an escaping backslash (it may end the previous chunk). */
  private escaped = false;

  feed(chunk: Uint8Array): BudgetExceeded | undefined {
    const n = chunk.length;
    let i = 0, containers = this.containers, members = this.members;
    let verdict: BudgetExceeded | undefined;
    while (i < n) {
      if (this.inString) {
        i = this.skipString(chunk, i);
        continue;
      }
      // Outside strings, byte by byte in locals (the hot loop for number-heavy bodies).
      for (; i < n; i++) {
        const c = chunk[i]!;
        if (c === QUOTE) {
          this.inString = true;
          i++;
          break;
        }
        if (c === COMMA) {
          if (++members > MAX_JSON_MEMBERS) verdict = "members";
        } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
          if (++containers > MAX_JSON_CONTAINERS) verdict = "containers";
        } else continue;
        if (verdict) {
          i = n;
          break;
        }
      }
    }
    this.containers = containers;
    this.members = members;
    return verdict;
  }

  /** From `from` inside a string: the index after its closing quote, or the chunk's end (still inside). */
  private skipString(chunk: Uint8Array, from: number): number {
    let at = from;
    for (;;) {
      const quote = chunk.indexOf(QUOTE, at);
      const end = quote === -1 ? chunk.length : quote;
      // Backslashes right before `end` decide whether the quote (or the next chunk's first byte) is escaped.
      let run = 0;
      while (end - run - 1 >= at && chunk[end - run - 1] === BACKSLASH) run++;
      const carried = end - run === at && this.escaped; // the run reaches back to where this call started
      const escapedAtEnd = (run + (carried ? 1 : 0)) % 2 === 1;
      if (quote === -1) {
        this.escaped = escapedAtEnd;
        return chunk.length;
      }
      this.escaped = false;
      if (!escapedAtEnd) {
        this.inString = false;
        return quote + 1;
      }
      at = quote + 1; // an escaped quote: the string goes on
    }
  }
}
