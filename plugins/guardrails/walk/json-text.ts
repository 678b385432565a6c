// The strings inside JSON a model reads or writes as data (tool arguments, tool inputs, function responses): every
// string value, keys left alone. A visitor returns the string to keep; the container is changed only when one differs.
// No depth limit: a limit would be a place to hide text from the rules (a key 70 arrays deep), and arguments are a
// string the request's own nesting limit never sees. Both walks are iterative, so the work is bounded by the size of
// the JSON (itself bounded by the body limit), never by the stack.

/** Visits text and returns what should stand in its place (the same string when nothing changes). */
export type Visit = (text: string) => string;

/** Every string value in `value`, in document order; objects and arrays are edited in place. Returns the (new) value. */
export function visitJsonValue(value: unknown, visit: Visit): unknown {
  if (typeof value === "string") return visit(value);
  if (value === null || typeof value !== "object") return value;
  // Frames of the containers being walked: each with its keys (undefined for arrays) and the next position.
  const stack: { c: any; keys: string[] | undefined; i: number }[] = [{ c: value, keys: Array.isArray(value) ? undefined : Object.keys(value), i: 0 }];
  while (stack.length) {
    const f = stack[stack.length - 1]!;
    const n = f.keys ? f.keys.length : f.c.length;
    if (f.i >= n) {
      stack.pop();
      continue;
    }
    const k = f.keys ? f.keys[f.i++]! : f.i++;
    const v = f.c[k];
    if (typeof v === "string") {
      const out = visit(v);
      if (out !== v) f.c[k] = out;
    } else if (v !== null && typeof v === "object") stack.push({ c: v, keys: Array.isArray(v) ? undefined : Object.keys(v), i: 0 });
  }
  return value;
}

const isSpace = (c: number) => c === 32 || c === 10 || c === 13 || c === 9;

/**
 * A JSON document held as a string (chat tool-call `arguments`): its string values visited and only those that
 * changed written again, in place (the rest of the text as it came). Text that is not JSON (a model's broken
 * arguments) is visited as it is.
 */
export function visitJsonString(text: string, visit: Visit): string {
  try {
    JSON.parse(text); // only to know it is JSON (V8 parses any depth without recursion)
  } catch {
    return visit(text);
  }
  // Valid JSON has `"` only around string tokens, so each one found from the last token's end opens the next.
  let out = "", at = 0, i = 0;
  while ((i = text.indexOf('"', i)) !== -1) {
    let end = i + 1;
    for (;;) {
      end = text.indexOf('"', end);
      let b = end - 1;
      while (text.charCodeAt(b) === 92) b--;
      if ((end - 1 - b) % 2 === 0) break; // an even run of backslashes: this quote closes the string
      end++;
    }
    let after = end + 1;
    while (isSpace(text.charCodeAt(after))) after++;
    if (text.charCodeAt(after) !== 58 /* : a key */) {
      const raw = text.slice(i + 1, end);
      const s = raw.includes("\\") ? (JSON.parse(text.slice(i, end + 1)) as string) : raw;
      const n = visit(s);
      if (n !== s) (out += text.slice(at, i) + JSON.stringify(n)), (at = end + 1);
    }
    i = end + 1;
  }
  return at ? out + text.slice(at) : text;
}
