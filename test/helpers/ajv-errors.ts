// ajv's errors for a value checked against a union of tagged variants list every variant's complaint; the useful
// ones are those of the variant whose tag matched. This keeps the errors that are not a tag mismatch (`type` const
// or enum) nor the union's own summary, deepest first.
import type { ErrorObject } from "ajv";

const isTagMismatch = (e: ErrorObject) => (e.keyword === "const" || e.keyword === "enum") && /\/type$/.test(e.instancePath);

export function describeAjvErrors(errors: ErrorObject[] | null | undefined, max = 8): string {
  const all = errors ?? [];
  const telling = all.filter((e) => !isTagMismatch(e) && e.keyword !== "anyOf" && e.keyword !== "oneOf");
  const list = [...(telling.length ? telling : all)].sort((a, b) => b.instancePath.length - a.instancePath.length).slice(0, max);
  return list.map((e) => `${e.instancePath || "/"} ${e.message}${e.params && Object.keys(e.params).length ? ` ${JSON.stringify(e.params)}` : ""}`).join("\n");
}
