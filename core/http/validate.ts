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
  [/^\^data:/, "must be a base64 data: URL"],
  [/^\^\[A-Za-z0-9\+\/[^\]]*\]\+=\{0,2\}\$$/, "must be base64 (without a data: prefix)"],
];

function describe(e: ErrorObject): { field: string; message: string } {
  const p = e.params as Record<string, any>;
  switch (e.keyword) {
    case "required": return { field: fieldPath(e.instancePath, p.missingProperty), message: "is required" };
    case "enum": return { field: fieldPath(e.instancePath), message: `must be one of ${p.allowedValues.map((v: unknown) => JSON.stringify(v)).join(", ")}` };
    case "const": return { field: fieldPath(e.instancePath), message: `must be ${JSON.stringify(p.allowedValue)}` };
    case "discriminator": return { field: fieldPath(e.instancePath, p.tag), message: p.error === "mapping" ? `unsupported value ${JSON.stringify(p.tagValue)}` : "must be a string" };
    case "pattern": return { field: fieldPath(e.instancePath), message: PATTERN_TEXT.find(([re]) => re.test(p.pattern))?.[1] ?? e.message ?? "is invalid" };
    case "additionalProperties": return { field: fieldPath(e.instancePath, p.additionalProperty), message: "is not allowed" };
    default: return { field: fieldPath(e.instancePath), message: e.message ?? "is invalid" };
  }
}

/** Prefer the most specific error: anyOf/oneOf summaries say less than the branch errors under them. */
function pick(errors: ErrorObject[]): ErrorObject {
  const concrete = errors.filter((e) => e.keyword !== "anyOf" && e.keyword !== "oneOf" && e.keyword !== "if");
  const pool = concrete.length ? concrete : errors;
  return pool.reduce((a, b) => (b.instancePath.length > a.instancePath.length ? b : a));
}

export function validationError(validate: ValidateFunction, code: "INVALID_REQUEST" | "BAD_REQUEST"): GatewayError {
  const errors = validate.errors ?? [];
  const first = errors.length ? describe(pick(errors)) : { field: "(body)", message: "is invalid" };
  const all = errors.slice(0, 10).map(describe);
  return new GatewayError(400, code, `Invalid request: ${first.field} ${first.message}`, {
    details: { field: first.field, errors: all },
  });
}
