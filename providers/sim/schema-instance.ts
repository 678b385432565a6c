// A value that satisfies a JSON Schema, for simulated tool arguments and structured output; checked with ajv
// using the draft the schema names ($schema), since clients send draft-07 and 2020-12 alike.
import { Ajv, Ajv2019, Ajv2020, addFormats, type ValidateFunction } from "../../core/ajv.ts";
import { LRUCache } from "lru-cache";
import { numberInBounds } from "./number-in-bounds.ts";

type Schema = Record<string, any> | boolean;

export interface InstanceHints {
  /** Words from the conversation, used to fill free-text strings with something relevant. */
  words: string[];
  /** File names the user wrote, for a path (else a path is "."). */
  files?: string[];
  /**
   * Only the properties an object requires, as a model calling a tool passes only what it needs: an agent's optional
   * switches (Claude Code's dangerouslyDisableSandbox, run_in_background) stay unset.
   */
  requiredOnly?: boolean;
}

/**
 * What the simulator puts in a command to run (a shell tool's command, Codex's cmd): it prints a line and changes
 * nothing. Words of the prompt are never run.
 */
export const HARMLESS_COMMAND = "echo simulated";
const COMMAND_KEY = /^(command|cmd|commands|script|shell_?command|command_?line)$/;
const PATH_KEY = /(path|^file|filename)$/;

// What one schema may ask of the simulator. The schema is the caller's, and all of this runs on the event loop: a
// schema asking for a billion items, or a 1e9-character string, would hold every other request.
/** The largest schema read, as JSON text. */
const MAX_SCHEMA_CHARS = 256 * 1024;
/** Values generated for one schema (arrays inside arrays multiply). */
const MAX_VALUES = 10_000;
/** The longest string and the longest array a schema may require. */
const MAX_STRING = 64 * 1024;
const MAX_ITEMS = 1_000;


function deref(schema: Schema, root: Schema): Schema {
  let s = schema;
  for (let i = 0; i < 16 && typeof s === "object" && typeof s.$ref === "string" && s.$ref.startsWith("#/"); i++) {
    let node: any = root;
    for (const seg of s.$ref.slice(2).split("/")) node = node?.[seg.replace(/~1/g, "/").replace(/~0/g, "~")];
    s = node ?? {};
  }
  return s;
}

function stringFor(s: Record<string, any>, key: string, hints: InstanceHints): string {
  switch (s.format) {
    case "date-time": return "2025-01-01T12:00:00Z";
    case "date": return "2025-01-01";
    case "time": return "12:00:00Z";
    case "email": return "user@example.com";
    case "uri":
    case "url": return "https://example.com/";
    case "uuid": return "123e4567-e89b-42d3-a456-426614174000";
  }
  const lower = key.toLowerCase();
  if (COMMAND_KEY.test(lower)) return HARMLESS_COMMAND;
  if (PATH_KEY.test(lower)) return hints.files?.[0] ?? "."; // the file the user named, else the current directory
  // A capitalised word that does not start the sentence is most likely a name (a city, a person, a product).
  const capital = (w: string) => /^[A-Z][a-z]{2,}/.test(w);
  const proper = hints.words.slice(1).find(capital) ?? hints.words.find(capital);
  let v = /city|location|place|country|name|query|topic|subject/.test(lower) && proper ? proper : hints.words.slice(0, 3).join(" ") || "example";
  if (s.maxLength !== undefined && v.length > s.maxLength) v = v.slice(0, s.maxLength);
  if (typeof s.minLength === "number" && v.length < s.minLength) {
    if (s.minLength > MAX_STRING) throw new Error(`minLength ${s.minLength} is over the ${MAX_STRING} characters the simulator writes`);
    v += "x".repeat(s.minLength - v.length);
  }
  return v;
}

/** Values still to generate for the schema being read (validInstance resets it). */
let budget = MAX_VALUES;

function instanceOf(schema: Schema, root: Schema = schema, hints: InstanceHints = { words: [] }, key = "", depth = 0): unknown {
  if (--budget < 0) throw new Error(`the schema asks for more than the ${MAX_VALUES} values the simulator generates`);
  const s = deref(schema, root);
  if (s === true || s === undefined) return hints.words[0] ?? "example";
  if (s === false) return null;
  if (depth > 12) return null;
  if ("const" in s) return s.const;
  if (Array.isArray(s.enum) && s.enum.length) return s.enum[0];
  if (s.default !== undefined) return s.default;
  if (Array.isArray(s.anyOf) && s.anyOf.length) return instanceOf(s.anyOf.find((b: any) => (deref(b, root) as any)?.type !== "null") ?? s.anyOf[0], root, hints, key, depth + 1);
  if (Array.isArray(s.oneOf) && s.oneOf.length) return instanceOf(s.oneOf[0], root, hints, key, depth + 1);
  if (Array.isArray(s.allOf) && s.allOf.length) {
    const merged: Record<string, any> = { type: "object", properties: {}, required: [] };
    for (const part of s.allOf.map((p: Schema) => deref(p, root)) as Record<string, any>[]) {
      Object.assign(merged.properties, part.properties);
      merged.required.push(...(part.required ?? []));
      if (part.type) merged.type = part.type;
    }
    return instanceOf(merged, root, hints, key, depth + 1);
  }
  let type = s.type;
  if (Array.isArray(type)) type = type.find((t: string) => t !== "null") ?? "null";
  if (!type) type = s.properties ? "object" : s.items ? "array" : "string";
  switch (type) {
    case "object": {
      const out: Record<string, unknown> = {};
      const required: string[] = Array.isArray(s.required) ? s.required : [];
      const properties = Object.entries<Schema>(s.properties ?? {});
      // Optional properties too when not requiredOnly, or as many as minProperties asks for.
      const optional = hints.requiredOnly ? Math.max(0, (s.minProperties ?? 0) - required.length) : Infinity;
      let added = 0;
      for (const [k, sub] of properties) {
        if (!required.includes(k) && added++ >= optional) continue;
        out[k] = instanceOf(sub, root, hints, k, depth + 1);
      }
      for (const k of required) if (!(k in out)) out[k] = hints.words[0] ?? "example";
      return out;
    }
    case "array": {
      const n = Math.max(s.minItems ?? 1, 1);
      if (n > MAX_ITEMS) throw new Error(`minItems ${n} is over the ${MAX_ITEMS} items the simulator writes`);
      const max = s.maxItems ?? n;
      const items = Array.isArray(s.prefixItems) ? s.prefixItems : null;
      return Array.from({ length: Math.min(n, max) }, (_, i) => instanceOf(items?.[i] ?? s.items ?? {}, root, hints, key, depth + 1));
    }
    case "string": return stringFor(s, key, hints);
    case "integer": return numberInBounds(s, true);
    case "number": return numberInBounds(s, false);
    case "boolean": return false; // a switch left off: it enables nothing the caller did not ask for
    default: return null;
  }
}

const validators = new LRUCache<string, ValidateFunction>({ max: 256 });
/** One ajv per draft, made on first use: each compiles its meta-schemas (a gateway may never need them). */
const engines: Partial<Record<"draft7" | "draft2019" | "draft2020", InstanceType<typeof Ajv>>> = {};
/** Draft 2020-12 and 2019-09 have engines of their own; draft-04, -06, -07 and a $schema nobody knows are read as draft-07. */
const engineFor = (draft: string) =>
  draft.includes("2020-12") ? (engines.draft2020 ??= addFormats(new Ajv2020({ strict: false })))
  : draft.includes("2019-09") ? (engines.draft2019 ??= addFormats(new Ajv2019({ strict: false })))
  : (engines.draft7 ??= addFormats(new Ajv({ strict: false, allErrors: false })));

/** Keywords whose values are data, not schemas: left as they are. */
const DATA = new Set(["enum", "const", "default", "examples"]);
/**
 * Keywords that run the caller's regular expressions. V8's backtracking engine takes exponential time on patterns
 * such as ^(a+)+$, and the values checked are built from the caller's words: never run on the event loop. The
 * simulator does not write strings to a pattern anyway.
 */
const REGEX = new Set(["pattern", "patternProperties"]);

/** The schema without REGEX keywords, anywhere a schema can be. */
function withoutPatterns(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutPatterns);
  if (node === null || typeof node !== "object") return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) if (!REGEX.has(k)) out[k] = DATA.has(k) ? v : withoutPatterns(v);
  return out;
}

/** A draft-04 schema as draft-07 says it: boolean exclusiveMinimum/Maximum become the bound itself; `id` goes. */
function fromDraft04(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(fromDraft04);
  if (node === null || typeof node !== "object") return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === "id" && typeof v === "string") continue;
    out[k] = DATA.has(k) ? v : fromDraft04(v);
  }
  for (const [flag, bound] of [["exclusiveMinimum", "minimum"], ["exclusiveMaximum", "maximum"]] as const) {
    if (typeof out[flag] !== "boolean") continue;
    if (out[flag] && out[bound] !== undefined) out[flag] = out[bound], delete out[bound];
    else delete out[flag];
  }
  return out;
}

/**
 * The schema as its engine reads it: without $schema (the engine is picked from it here; ajv refuses a meta-schema
 * it does not hold, such as draft-04's or draft-06's) and $id (it would register globally and collide on the next
 * compile); a draft-04 schema rewritten as draft-07.
 */
function forEngine(schema: Record<string, any>): Record<string, any> {
  const { $schema, $id: _ignored, ...rest } = withoutPatterns(schema) as Record<string, any>;
  return String($schema ?? "").includes("draft-04") ? (fromDraft04(rest) as Record<string, any>) : rest;
}

export function validatorFor(schema: Record<string, any>, key = JSON.stringify(schema)): ValidateFunction {
  let v = validators.get(key);
  if (!v) {
    v = engineFor(String(schema.$schema ?? "")).compile(forEngine(schema));
    validators.set(key, v);
  }
  return v!;
}

/** An instance of `schema`, checked against it; throws if the simulator cannot satisfy the schema. */
export function validInstance(schema: Record<string, any>, hints: InstanceHints): unknown {
  const key = JSON.stringify(schema);
  if (key.length > MAX_SCHEMA_CHARS) throw new Error(`the schema is over the ${MAX_SCHEMA_CHARS / 1024} KB the simulator reads`);
  const readable = forEngine(schema);
  budget = MAX_VALUES;
  const value = instanceOf(readable, readable, hints);
  const validate = validatorFor(schema, key);
  if (!validate(value)) {
    throw new Error(`simulator could not produce a value for the schema: ${validate.errors?.[0]?.instancePath} ${validate.errors?.[0]?.message}`);
  }
  return value;
}
