// A root allOf branch may constrain the object without naming properties: {"if": {...}, "then": {"required": ["x"]}}
// (x required in one mode), {"not": {"required": ["a", "b"]}}, {"dependentRequired": {...}}. allOf means the object
// meets every branch, so once the combinator is merged away (schema-root-combinator.ts) such a keyword goes on the
// root itself, where Anthropic and Converse take it as JSON Schema and Gemini's translation says it in the
// description (chat-to-gemini/schema-constraint-notes.ts). A keyword the root already holds otherwise (a second
// if/then: the root has one `if`) cannot go there too: it is said in the description ("Also must match: …"), advice
// to the model, as the shapes of a union are, so the rewrite still accepts every input the original did.

type Json = Record<string, any>;

/** What allInto merges, and annotations: nothing left to keep. */
const MERGED = new Set([
  "properties", "required", "additionalProperties", "title", "description", "$comment", "examples", "default",
  "$defs", "definitions", "$schema", "$id", "type",
]);
/** An if goes with its then and else: one conditional. */
const CONDITIONAL = ["if", "then", "else"];
/** Longest constraint shown in the note, and longest note: advice to the model, past it cut with "…". */
const SHOWN_MAX = 1000;
const NOTE_MAX = 4096;

/**
 * Each allOf branch's constraints beyond properties and required, put on `into` (the merged root) or, where it holds
 * that keyword already, said in its description. `idOf` gives equal JSON one id (a repeated branch is no conflict)
 * and throws for a schema too deep to write.
 */
export function allOfConstraintsKept(into: Json, branches: Json[], idOf: (v: unknown) => string): void {
  const notes: string[] = [];
  const seen = new Set<string>();
  for (const b of branches) {
    for (const group of groupsOf(b)) {
      const id = idOf(group);
      if (seen.has(id)) continue;
      seen.add(id);
      const keys = Object.keys(group);
      const taken = keys.some((k) => into[k] !== undefined) || (keys.some((k) => CONDITIONAL.includes(k)) && CONDITIONAL.some((k) => into[k] !== undefined));
      if (!taken) Object.assign(into, group);
      else if (!keys.every((k) => into[k] !== undefined && idOf(into[k]) === idOf(group[k]))) notes.push(cut(JSON.stringify(group), SHOWN_MAX));
    }
  }
  if (notes.length) into.description = [into.description, cut(`Also must match: ${notes.join("; ")}`, NOTE_MAX)].filter((d) => typeof d === "string" && d).join("\n");
}

/** A branch's constraints to keep, as groups that go together: its if/then/else, and each other keyword alone. */
function groupsOf(b: Json): Json[] {
  const groups: Json[] = [];
  const conditional: Json = {};
  for (const [k, v] of Object.entries(b)) {
    if (MERGED.has(k) || v === undefined) continue;
    if (CONDITIONAL.includes(k)) conditional[k] = v;
    else groups.push({ [k]: v });
  }
  if (Object.keys(conditional).length) groups.unshift(conditional);
  return groups;
}

function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  let at = max - 1;
  if (/[\uD800-\uDBFF]/.test(text[at - 1]!)) at--; // not half a surrogate pair
  return `${text.slice(0, at)}…`;
}
