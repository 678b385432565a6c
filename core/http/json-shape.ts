// What JSON.parse accepts but the gateway cannot pass on: nesting deep enough to overflow the stack of the
// recursive steps after it (JSON.stringify to the upstream, schema compilation, cloning), and numbers too
// large for a double (`1e999` parses to Infinity, which serialises as `null`). One bounded walk of the value.
import { fieldPath } from "./validate.ts";

/** Deeper than any real request (tool schemas included); far below what overflows JSON.stringify. */
export const MAX_JSON_DEPTH = 128;

export interface ShapeProblem {
  kind: "depth" | "number";
  /** Where, as a field path: `messages[0].content`, `max_tokens`. */
  field: string;
}

type Found = { kind: ShapeProblem["kind"]; path: (string | number)[] };

// Recursion is bounded by MAX_JSON_DEPTH, so it cannot overflow the stack itself.
function walk(v: unknown, depth: number): Found | undefined {
  if (typeof v === "number") return Number.isFinite(v) ? undefined : { kind: "number", path: [] };
  if (v === null || typeof v !== "object") return undefined;
  if (depth >= MAX_JSON_DEPTH) return { kind: "depth", path: [] };
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const f = walk(v[i], depth + 1);
      if (f) return f.path.unshift(i), f;
    }
    return undefined;
  }
  for (const k in v as Record<string, unknown>) {
    const f = walk((v as Record<string, unknown>)[k], depth + 1);
    if (f) return f.path.unshift(k), f;
  }
  return undefined;
}

export function checkJsonShape(value: unknown): ShapeProblem | undefined {
  const f = walk(value, 0);
  if (!f) return undefined;
  const pointer = f.path.map((s) => `/${String(s).replace(/~/g, "~0").replace(/\//g, "~1")}`).join("");
  return { kind: f.kind, field: fieldPath(pointer) };
}
