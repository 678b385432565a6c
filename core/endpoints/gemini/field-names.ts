// The Gemini API reads a request as proto3 JSON, which accepts each field by its proto name (snake_case:
// `system_instruction`, `generation_config.max_output_tokens`, `inline_data.mime_type`, as Google's REST examples
// write them) as well as by its JSON name (camelCase, what the SDKs send). The translators, the policies and the
// validator read camelCase, so a snake_case request is renamed to it first; otherwise a translated endpoint would
// silently drop its system instruction, settings and tools. Values that are not messages keep their keys as sent: a
// function call's `args`, a function response's `response`, JSON Schema values, a Schema's `properties` names,
// `labels`, and the gateway's own `providerOptions`.
import { invalidRequest } from "../../errors.ts";

/** Fields whose value is free-form JSON (a Struct, a Value or a map with the client's own keys): copied as sent. */
const OPAQUE = new Set(["args", "parametersJsonSchema", "responseJsonSchema", "example", "default", "labels", "providerOptions"]);

const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

/** `max_output_tokens` -> `maxOutputTokens`; a leading underscore and names without one are left alone. */
const camel = (k: string): string => (k.indexOf("_") > 0 ? k.replace(/(?<=[A-Za-z0-9])_([A-Za-z0-9])/g, (_, c: string) => c.toUpperCase()) : k);

/** Whether the value under `key` (in a message reached through `parentKey`) is free-form JSON. */
function opaque(key: string, parentKey: string): boolean {
  // functionResponse.response is a Struct; a function declaration's `response` is a Schema (a message).
  return OPAQUE.has(key) || (key === "response" && parentKey === "functionResponse");
}

interface Frame { value: unknown; key: string; path: string; mapOfMessages: boolean }

/**
 * Renames `body`'s snake_case fields to camelCase in place, at any depth (iteratively: a deep body cannot exhaust the
 * stack). Both spellings of one field is a 400 naming it, as it is ambiguous which the client meant.
 */
export function camelCaseGeminiFields(body: unknown): void {
  const stack: Frame[] = [{ value: body, key: "", path: "", mapOfMessages: false }];
  while (stack.length > 0) {
    const { value, key, path, mapOfMessages } = stack.pop()!;
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], key, path: `${path}[${i}]`, mapOfMessages: false });
      continue;
    }
    if (!isObj(value)) continue;
    for (const k of Object.keys(value)) {
      const at = path ? `${path}.${k}` : k;
      // A Schema's `properties` is a map: its keys are the client's property names, its values Schemas.
      if (mapOfMessages) {
        stack.push({ value: value[k], key: "", path: at, mapOfMessages: false });
        continue;
      }
      const name = camel(k);
      if (name !== k) {
        if (Object.prototype.hasOwnProperty.call(value, name)) {
          throw invalidRequest(`${at} and ${path ? `${path}.` : ""}${name} are the same field spelled two ways: send one`, at);
        }
        value[name] = value[k];
        delete value[k];
      }
      if (opaque(name, key)) continue;
      stack.push({ value: value[name], key: name, path: path ? `${path}.${name}` : name, mapOfMessages: name === "properties" });
    }
  }
}
