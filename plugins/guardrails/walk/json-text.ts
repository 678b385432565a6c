// The strings inside JSON a model reads or writes as data (tool arguments, tool inputs, function responses): every
// string value, keys left alone. A visitor returns the string to keep; the container is changed only when one differs.

/** Visits text and returns what should stand in its place (the same string when nothing changes). */
export type Visit = (text: string) => string;

const MAX_DEPTH = 64;

/** Every string value in `value`, depth-first; objects and arrays are edited in place. Returns the (new) value. */
export function visitJsonValue(value: unknown, visit: Visit, depth = 0): unknown {
  if (typeof value === "string") return visit(value);
  if (value === null || typeof value !== "object" || depth > MAX_DEPTH) return value;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const v = value[i];
      const n = visitJsonValue(v, visit, depth + 1);
      if (n !== v) value[i] = n;
    }
    return value;
  }
  const o = value as Record<string, unknown>;
  for (const k of Object.keys(o)) {
    const v = o[k];
    const n = visitJsonValue(v, visit, depth + 1);
    if (n !== v) o[k] = n;
  }
  return value;
}

/**
 * A JSON document held as a string (chat tool-call `arguments`): its string values visited and the document written
 * again only when one changed. Text that is not JSON (a model's broken arguments) is visited as it is.
 */
export function visitJsonString(text: string, visit: Visit): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return visit(text);
  }
  if (parsed === null || typeof parsed !== "object") return typeof parsed === "string" ? JSON.stringify(visit(parsed)) : text;
  let changed = false;
  visitJsonValue(parsed, (s) => {
    const n = visit(s);
    if (n !== s) changed = true;
    return n;
  });
  return changed ? JSON.stringify(parsed) : text;
}
