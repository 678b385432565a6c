// JSON Schema constraints Gemini's Schema has no keyword for (exclusiveMinimum, multipleOf, uniqueItems, prefixItems,
// not, if/then/else, dependentRequired, patternProperties, a schema under additionalProperties…): sending them is a
// 400, dropping them unsaid lets the model send 0 where the tool wants more than 0. So each is said in the
// description, as an unsupported format is, "(multipleOf: 0.5)", a long value cut: advice to the model, not a schema.
// Annotations (default, examples, $comment, deprecated) and additionalProperties true/false constrain nothing the
// model must be told and are left out.

const DESCRIBED = [
  "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
  "uniqueItems", "prefixItems", "contains", "minContains", "maxContains",
  "minProperties", "maxProperties", "additionalProperties", "patternProperties", "propertyNames", "dependentRequired", "dependentSchemas",
  "not", "if", "then", "else",
];
/** Longest value shown in a note; past it the JSON is cut with "…". */
export const NOTE_VALUE_MAX = 200;

const isObj = (v: unknown): v is Record<string, unknown> => !!v && typeof v === "object" && !Array.isArray(v);

/** The notes for `s`'s constraints Gemini cannot take, in a fixed order. */
export function constraintNotes(s: Record<string, unknown>): string[] {
  const notes: string[] = [];
  for (const k of DESCRIBED) {
    const v = s[k];
    if (v === undefined || v === false) continue;
    if (k === "additionalProperties" && !isObj(v)) continue; // true / false: no shape to tell
    notes.push(`(${k}: ${shown(v)})`);
  }
  return notes;
}

function shown(v: unknown): string {
  const text = JSON.stringify(v) ?? String(v);
  if (text.length <= NOTE_VALUE_MAX) return text;
  let cut = NOTE_VALUE_MAX - 1;
  if (/[\uD800-\uDBFF]/.test(text[cut - 1]!)) cut--; // not half a surrogate pair
  return `${text.slice(0, cut)}…`;
}
