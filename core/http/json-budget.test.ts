import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { JsonBudget, MAX_JSON_CONTAINERS, MAX_JSON_MEMBERS } from "./json-budget.ts";

/** The plain byte-by-byte count the fast scanner must agree with. */
function reference(text: Buffer): { containers: number; members: number } {
  let containers = 0, members = 0, inString = false, escaped = false;
  for (const c of text) {
    if (inString) {
      if (escaped) escaped = false;
      else if (c === 0x5c) escaped = true;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x2c) members++;
    else if (c === 0x5b || c === 0x7b) containers++;
  }
  return { containers, members };
}

function feedInChunks(bytes: Buffer, cuts: number[]): JsonBudget {
  const budget = new JsonBudget();
  let at = 0;
  for (const cut of [...cuts.map((c) => c % (bytes.length + 1)).sort((a, b) => a - b), bytes.length]) {
    budget.feed(bytes.subarray(at, Math.max(at, cut)));
    at = Math.max(at, cut);
  }
  return budget;
}

describe("JsonBudget", () => {
  it("counts objects, arrays and members outside strings, whatever the escapes and wherever the chunks split", () => {
    // Text made of the bytes that matter (quotes, backslashes, brackets, commas) so escapes pile up at chunk edges.
    const text = fc.array(fc.constantFrom('"', "\\", "[", "{", ",", "]", "}", "a", ":"), { maxLength: 200 }).map((a) => Buffer.from(a.join("")));
    fc.assert(
      fc.property(text, fc.array(fc.nat(), { maxLength: 8 }), (bytes, cuts) => {
        const b = feedInChunks(bytes, cuts);
        expect({ containers: b.containers, members: b.members }).toEqual(reference(bytes));
      }),
      { numRuns: 2000 },
    );
  });

  it("skips strings: brackets and commas inside them, escaped quotes included, cost nothing", () => {
    const b = new JsonBudget();
    expect(b.feed(Buffer.from(JSON.stringify({ a: '[{,}]\\"[,', b: ["x", "y\\\\"], c: {} })))).toBeUndefined();
    expect({ containers: b.containers, members: b.members }).toEqual({ containers: 3, members: 3 });
  });

  it("refuses `[[],[],…]` at the container that passes the limit, long before the end of a 10 MiB body", () => {
    const b = new JsonBudget();
    const chunk = Buffer.from("[],".repeat(20_000));
    let fed = 0, verdict;
    while (!(verdict = b.feed(chunk)) && fed < 10 * 1024 * 1024) fed += chunk.length;
    expect(verdict).toBe("containers");
    expect(b.containers).toBe(MAX_JSON_CONTAINERS + 1);
    expect(fed).toBeLessThan(400_000);
  });

  it("refuses a body of more than a million members (`[0,0,…]`), and passes one just under", () => {
    const under = new JsonBudget();
    expect(under.feed(Buffer.from(`[${"0,".repeat(MAX_JSON_MEMBERS)}0]`))).toBeUndefined();
    const over = new JsonBudget();
    expect(over.feed(Buffer.from(`[${"0,".repeat(MAX_JSON_MEMBERS + 1)}0]`))).toBe("members");
  });
});
