// zod-to-json-schema (the MCP SDK's converter for zod v3, `$refStrategy: "root"`) writes a sub-schema used twice as a
// pointer to the first place it appears, which in a union is inside a branch: `"from": {"$ref":
// "#/anyOf/0/properties/at"}`. Once the root combinator is merged away (schema-root-combinator.ts) such a pointer
// points at nothing. Each target is kept under the merged schema's $defs and the pointers to it rewritten, so the
// schema sent resolves as the client's did (a target pointing into the removed combinator again, itself included,
// rewritten the same way). Each target counts in the merge's work (schema-merge-budget.ts).
import { localRef } from "./json-pointer.ts";
import { newMergeWork, SchemaTooComplex, spend, type MergeWork } from "./schema-merge-budget.ts";

type Json = Record<string, any>;
const isObj = (v: unknown): v is Json => !!v && typeof v === "object" && !Array.isArray(v);

const INTO_ROOT_COMBINATOR = /^#\/(allOf|anyOf|oneOf)(\/|$)/;
const ANY_INTO_ROOT_COMBINATOR = /"#\/(allOf|anyOf|oneOf)(\/|")/;

/** `merged` (the schema `doc` became) with its pointers into `doc`'s root allOf/anyOf/oneOf moved to `$defs`. */
export function rootCombinatorPointersRehomed(merged: Json, doc: unknown, work: MergeWork = newMergeWork()): Json {
  if (!ANY_INTO_ROOT_COMBINATOR.test(jsonOf(doc))) return merged;
  if (merged.$defs !== undefined && !isObj(merged.$defs)) return merged;
  const taken = new Set(Object.keys(merged.$defs ?? {}));
  // The next number to try per name: many targets cleaning up to one name (CJK names) are numbered, not searched anew.
  const next = new Map<string, number>();
  const moved = new Map<string, string>();
  const targets: [string, unknown][] = [];
  const rehomed = (ref: string): string | undefined => {
    if (!INTO_ROOT_COMBINATOR.test(ref)) return undefined;
    const known = moved.get(ref);
    if (known) return known;
    const target = localRef(doc, ref);
    if (target === undefined) return undefined;
    spend(work, 1);
    const base = ref.slice(2).replace(/[^A-Za-z0-9_]/g, "_");
    let name = base;
    for (let n = next.get(base) ?? 2; taken.has(name); n++) {
      name = `${base}_${n}`;
      next.set(base, n + 1);
    }
    taken.add(name);
    moved.set(ref, `#/$defs/${name}`);
    targets.push([name, target]);
    return `#/$defs/${name}`;
  };
  const done = new WeakMap<object, unknown>();
  const out = rewritten(merged, rehomed, done) as Json;
  if (!targets.length) return merged;
  const $defs: Json = { ...(out.$defs ?? {}) };
  // A target's own pointers may name more targets: the list grows while it is read.
  for (let i = 0; i < targets.length; i++) put($defs, targets[i]![0], rewritten(targets[i]![1], rehomed, done));
  return { ...out, $defs };
}

/**
 * `root` with each `$ref` that `rehomed` names anew replaced, copying only what changes. Iterative (a client's JSON may
 * be nested deeper than the stack); each object once, however often the merge shares it.
 */
function rewritten(root: unknown, rehomed: (ref: string) => string | undefined, done: WeakMap<object, unknown>): unknown {
  if (!root || typeof root !== "object") return root;
  const stack: [object, boolean][] = [[root, false]];
  while (stack.length) {
    const top = stack[stack.length - 1]!;
    const [node, opened] = top;
    if (done.has(node)) {
      stack.pop();
      continue;
    }
    if (!opened) {
      top[1] = true;
      for (const v of Object.values(node)) if (v && typeof v === "object" && !done.has(v)) stack.push([v, false]);
      continue;
    }
    stack.pop();
    let copy: any;
    for (const [k, v] of Object.entries(node)) {
      const now = v && typeof v === "object" ? done.get(v) : v;
      if (now === v) continue;
      copy ??= Array.isArray(node) ? [...node] : { ...node };
      put(copy, k, now);
    }
    const ref = (node as Json).$ref;
    const to = !Array.isArray(node) && typeof ref === "string" ? rehomed(ref) : undefined;
    if (to) put((copy ??= { ...node }), "$ref", to);
    done.set(node, copy ?? node);
  }
  return done.get(root);
}

/** Sets an own property, "__proto__" included. */
const put = (o: object, k: string, v: unknown) => Object.defineProperty(o, k, { value: v, writable: true, enumerable: true, configurable: true });

function jsonOf(doc: unknown): string {
  try {
    return JSON.stringify(doc) ?? "";
  } catch (e) {
    if (e instanceof RangeError) throw new SchemaTooComplex("it is nested too deep");
    throw e;
  }
}
