// JSON with object keys sorted at every depth: one text for one value, whatever order a client wrote its members in.
// Two places hash request bodies with it: the response cache's key and the idempotency plugin's body check; the MCP
// upstream compares tool lists with it (core/mcp/upstream.ts), so a schema written in another order is no change.

/** JSON with every object's keys in sorted order; undefined members left out as JSON.stringify does. */
export function canonicalJson(v: unknown): string {
  if (v === null || typeof v !== "object") return JSON.stringify(v) ?? "null";
  if (Array.isArray(v)) {
    let out = "[";
    for (let i = 0; i < v.length; i++) out += (i ? "," : "") + (v[i] === undefined ? "null" : canonicalJson(v[i]));
    return out + "]";
  }
  const o = v as Record<string, unknown>;
  let out = "{";
  let first = true;
  for (const k of Object.keys(o).sort()) {
    const x = o[k];
    if (x === undefined || typeof x === "function") continue;
    out += (first ? "" : ",") + JSON.stringify(k) + ":" + canonicalJson(x);
    first = false;
  }
  return out + "}";
}
