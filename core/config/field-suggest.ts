// "Did you mean": an unknown field in gateway.yaml is most often a typo of one the schema allows at that level
// (budjet, rate_limit, allowed_models). The allowed names come from the schema itself, so they never drift.
import gatewaySchema from "../../schemas/gateway.schema.json" with { type: "json" };

type Schema = Record<string, any>;
const root = gatewaySchema as Schema;

/** The field names the schema allows in the object at `path` (every branch of a oneOf / allOf / if-then counted). */
export function allowedFields(path: readonly (string | number)[]): string[] {
  let here = branches(root);
  for (const seg of path) {
    const next: Schema[] = [];
    for (const s of here) {
      if (s.properties && Object.hasOwn(s.properties, seg)) next.push(s.properties[seg]);
      else if (typeof seg === "number" && s.items && typeof s.items === "object") next.push(s.items);
      else if (s.additionalProperties && typeof s.additionalProperties === "object") next.push(s.additionalProperties);
    }
    here = next.flatMap(branches);
  }
  return [...new Set(here.flatMap((s) => Object.keys(s.properties ?? {})))];
}

/** A schema with its $ref followed and its combined branches listed beside it. */
function branches(s: Schema): Schema[] {
  if (!s || typeof s !== "object") return [];
  if (typeof s.$ref === "string") return branches(resolveRef(s.$ref));
  const out = [s];
  for (const k of ["oneOf", "anyOf", "allOf"]) for (const b of s[k] ?? []) out.push(...branches(b));
  for (const k of ["then", "else"]) if (s[k]) out.push(...branches(s[k]));
  return out;
}

function resolveRef(ref: string): Schema {
  return ref.replace(/^#\//, "").split("/").reduce<Schema>((node, seg) => node?.[seg], root);
}

/** The allowed name closest to `name`, when it is close enough to be a typo of it. */
export function closest(name: string, allowed: readonly string[]): string | undefined {
  const norm = (s: string) => s.toLowerCase().replace(/-/g, "_");
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of allowed) {
    const d = distance(norm(name), norm(candidate));
    if (d < bestDistance) [best, bestDistance] = [candidate, d];
  }
  return best !== undefined && bestDistance <= Math.max(1, Math.floor(name.length / 3)) ? best : undefined;
}

/** Edit distance, a swap of neighbours counting one (optimal string alignment). */
function distance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}
