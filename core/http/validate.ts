// ajv errors -> one 400 whose message and details name the failing field.
import type { ErrorObject, ValidateFunction } from "ajv";
import { GatewayError } from "../errors.ts";

/** "/messages/0/content" -> "messages[0].content" */
export function fieldPath(instancePath: string, extra?: string): string {
  let out = "";
  for (const seg of instancePath.split("/").slice(1)) {
    const s = seg.replace(/~1/g, "/").replace(/~0/g, "~");
    out += /^\d+$/.test(s) ? `[${s}]` : out ? `.${s}` : s;
  }
  if (extra) out += out ? `.${extra}` : extra;
  return out || "(body)";
}

/** Patterns the schemas share, said in words rather than as a regular expression. */
const PATTERN_TEXT: [RegExp, string][] = [
  [/^\^\[Hh\]\[Tt\]\[Tt\]\[Pp\]\[Ss\]:\/\//, "must be an https URL with a host"],
  [/^\^\[Hh\]\[Tt\]\[Tt\]\[Pp\]\[Ss\]\?:\/\//, "must be an http or https URL with a host"],
  [/^\^data:/, "must be a base64 data: URL"],
  [/^\^\[A-Za-z0-9\+\/[^\]]*\]\+=\{0,2\}\$$/, "must be base64 (without a data: prefix)"],
];

function describe(e: ErrorObject): { field: string; message: string } {
  const p = e.params as Record<string, any>;
  switch (e.keyword) {
    case "required": return { field: fieldPath(e.instancePath, p.missingProperty), message: "is required" };
    case "enum": return { field: fieldPath(e.instancePath), message: `must be one of ${p.allowedValues.map((v: unknown) => JSON.stringify(v)).join(", ")}` };
    case "const": return { field: fieldPath(e.instancePath), message: `must be ${JSON.stringify(p.allowedValue)}` };
    case "type": return { field: fieldPath(e.instancePath), message: `must be ${String(p.type).split(",").join(" or ")}` };
    case "discriminator": return { field: fieldPath(e.instancePath, p.tag), message: p.error === "mapping" ? `unsupported value ${JSON.stringify(p.tagValue)}` : "must be a string" };
    case "pattern": return { field: fieldPath(e.instancePath), message: PATTERN_TEXT.find(([re]) => re.test(p.pattern))?.[1] ?? e.message ?? "is invalid" };
    case "additionalProperties": return { field: fieldPath(e.instancePath, p.additionalProperty), message: "is not allowed" };
    default: return { field: fieldPath(e.instancePath), message: e.message ?? "is invalid" };
  }
}

/** Errors that name a field inside the value (a missing property, an unknown type tag, a property not allowed). */
const INNER = new Set(["required", "discriminator", "additionalProperties"]);

/**
 * Prefer the most specific error: anyOf/oneOf summaries say less than the branch errors under them, and at one depth
 * an error naming a field inside the value says more than another branch's "must be one of" (tool_choice
 * {type:"function"} without function: `tool_choice.function is required`, not the string branch's enum).
 */
function pick(errors: ErrorObject[]): ErrorObject {
  const concrete = errors.filter((e) => e.keyword !== "anyOf" && e.keyword !== "oneOf" && e.keyword !== "if");
  const pool = concrete.length ? concrete : errors;
  const inner = (e: ErrorObject) => (INNER.has(e.keyword) ? 1 : 0);
  return pool.reduce((a, b) => {
    const deeper = b.instancePath.length - a.instancePath.length;
    return deeper > 0 || (deeper === 0 && inner(b) > inner(a)) ? b : a;
  });
}

/**
 * `wording`: "anthropic" says it the way the Messages API does (`messages.1.content: Field required`), because its
 * clients read those messages; details (field, errors) stay the gateway's either way.
 */
export function validationError(validate: ValidateFunction, code: "INVALID_REQUEST" | "BAD_REQUEST", wording: "gateway" | "anthropic" = "gateway"): GatewayError {
  const errors = validate.errors ?? [];
  const chosen = errors.length ? pick(errors) : undefined;
  const first = chosen ? describe(chosen) : { field: "(body)", message: "is invalid" };
  const all = errors.slice(0, 10).map(describe);
  const message = wording === "anthropic" ? anthropicMessage(chosen) : `Invalid request: ${first.field} ${first.message}`;
  return new GatewayError(400, code, message, { details: { field: first.field, errors: all } });
}

/** "/messages/1/content" + "role" -> "messages.1.content.role" (the Messages API's location form). */
function dottedPath(instancePath: string, extra?: string): string {
  const segs = instancePath.split("/").slice(1).map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
  if (extra) segs.push(extra);
  return segs.join(".");
}

const quoted = (v: unknown) => (typeof v === "string" ? `'${v}'` : JSON.stringify(v));

/** "Input should be 'a', 'b' or 'c'" (pydantic's literal wording, which the Messages API uses). */
function oneOfText(values: unknown[]): string {
  const q = values.map(quoted);
  return q.length < 2 ? `Input should be ${q[0] ?? "valid"}` : `Input should be ${q.slice(0, -1).join(", ")} or ${q.at(-1)}`;
}

const TYPE_TEXT: Record<string, string> = {
  string: "a valid string", integer: "a valid integer", number: "a valid number", boolean: "a valid boolean",
  array: "a valid list", object: "a valid dictionary", null: "None",
};

/** The Messages API's wording for one validation error: `<location>: <what>`. */
function anthropicMessage(e: ErrorObject | undefined): string {
  if (!e) return "Invalid request body";
  const p = e.params as Record<string, any>;
  const at = (extra?: string) => dottedPath(e.instancePath, extra);
  const say = (loc: string, text: string) => (loc ? `${loc}: ${text}` : text);
  switch (e.keyword) {
    case "required": return say(at(p.missingProperty), "Field required");
    case "enum": return say(at(), oneOfText(p.allowedValues));
    case "const": return say(at(), oneOfText([p.allowedValue]));
    case "type": {
      const t = String(p.type).split(",")[0]!;
      return say(at(), `Input should be ${TYPE_TEXT[t] ?? `of type ${t}`}`);
    }
    case "minimum": return say(at(), `Input should be greater than or equal to ${p.limit}`);
    case "maximum": return say(at(), `Input should be less than or equal to ${p.limit}`);
    case "exclusiveMinimum": return say(at(), `Input should be greater than ${p.limit}`);
    case "exclusiveMaximum": return say(at(), `Input should be less than ${p.limit}`);
    case "minItems": return say(at(), `List should have at least ${p.limit} item${p.limit === 1 ? "" : "s"} after validation`);
    case "maxItems": return say(at(), `List should have at most ${p.limit} item${p.limit === 1 ? "" : "s"} after validation`);
    case "minLength": return say(at(), `String should have at least ${p.limit} character${p.limit === 1 ? "" : "s"}`);
    case "maxLength": return say(at(), `String should have at most ${p.limit} character${p.limit === 1 ? "" : "s"}`);
    case "additionalProperties": return say(at(p.additionalProperty), "Extra inputs are not permitted");
    case "discriminator":
      return p.error === "mapping"
        ? say(at(), `Input tag ${quoted(p.tagValue)} found using ${quoted(p.tag)} does not match any of the expected tags`)
        : say(at(p.tag), "Input should be a valid string");
    case "pattern": return say(at(), PATTERN_TEXT.find(([re]) => re.test(p.pattern))?.[1] ?? `String should match pattern '${p.pattern}'`);
    default: return say(at(), e.message ?? "Input is invalid");
  }
}
