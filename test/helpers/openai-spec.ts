// Validates the gateway's answers on its OpenAI-compatible endpoints against OpenAI's official OpenAPI description
// (the vendored excerpt in test/fixtures/openai-openapi, refreshed by scripts/vendor-openai-openapi.ts). The
// description is OpenAPI 3.1 with some 3.0 leftovers, adapted here for ajv's JSON Schema 2020-12:
//   - `nullable: true` becomes a `null` alternative;
//   - `allOf` of plain object schemas (Response = ModelResponseProperties + ResponseProperties + its own) is merged
//     into one object, so what is required is known where each property is defined;
//   - an optional property may be null: the API itself sends null for unset optional fields (`user`, and `usage`
//     in response.created, as OpenAI's own streaming examples show) and its Python SDK types them Optional;
//     required properties keep exactly the types the description gives them;
//   - `oneOf` becomes `anyOf` and `discriminator` goes: the description uses oneOf loosely (overlapping variants)
//     and the discriminators are hints ajv cannot take with their mappings; a variant still has to match;
//   - formats (`unixtime`, `uri`) and `x-*` annotations are not checked.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "vitest";
import Ajv2020Module, { type ValidateFunction } from "ajv/dist/2020.js";
import { describeAjvErrors } from "./ajv-errors.ts";
import { SseParser } from "../../core/sse/parse.ts";

const Ajv2020 = Ajv2020Module.default ?? Ajv2020Module;
const FIXTURE = join(dirname(fileURLToPath(import.meta.url)), "..", "fixtures", "openai-openapi", "components.json");
const ID = "https://github.com/openai/openai-openapi/openapi.json";
const REF = "#/components/schemas/";
type Node = Record<string, any>;

const isObject = (x: unknown): x is Node => typeof x === "object" && x !== null && !Array.isArray(x);
const mapValues = (o: Node, f: (v: unknown) => unknown) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, f(v)]));

function orNull(s: Node): Node {
  if (typeof s.type === "string" && !("enum" in s) && !("const" in s)) return { ...s, type: [s.type, "null"] };
  return { anyOf: [s, { type: "null" }] };
}

/** The description's component schemas, adapted for ajv (see the header). */
export function adaptSchemas(schemas: Node): Node {
  const resolve = (p: Node): Node | undefined => (typeof p.$ref === "string" && p.$ref.startsWith(REF) ? schemas[p.$ref.slice(REF.length)] : p);
  const plain = (p: Node | undefined) => !!p && !p.anyOf && !p.oneOf && !p.allOf && (isObject(p.properties) || Array.isArray(p.required));

  function merge(node: Node): Node {
    const { allOf, ...rest } = node;
    const properties: Node = {};
    const required = new Set<string>();
    for (const part of (allOf as Node[]).map(resolve) as Node[]) {
      for (const [k, v] of Object.entries(part.properties ?? {})) properties[k] = k in properties ? { allOf: [properties[k], v] } : v;
      for (const r of part.required ?? []) required.add(r);
    }
    return { ...rest, type: "object", properties, required: [...required] };
  }

  function adapt(node: unknown): unknown {
    if (Array.isArray(node)) return node.map(adapt);
    if (!isObject(node)) return node;
    const n = Array.isArray(node.allOf) && node.allOf.every((p: Node) => plain(resolve(p))) ? merge(node) : node;
    const { nullable, discriminator: _d, oneOf, ...rest } = n;
    const out: Node = {};
    for (const [k, v] of Object.entries(rest)) out[k] = k === "properties" && isObject(v) ? mapValues(v, adapt) : adapt(v);
    if (oneOf) out.anyOf = adapt(oneOf);
    if (isObject(out.properties)) {
      const required = new Set<string>(Array.isArray(out.required) ? out.required : []);
      out.properties = Object.fromEntries(Object.entries(out.properties).map(([k, v]) => [k, required.has(k) ? v : orNull(v as Node)]));
    }
    return nullable === true ? orNull(out) : out;
  }
  return mapValues(schemas, adapt);
}

let compiled: { ajv: InstanceType<typeof Ajv2020>; events: Map<string, string>; source: Record<string, unknown> } | undefined;

function load() {
  if (compiled) return compiled;
  const vendored = JSON.parse(readFileSync(FIXTURE, "utf8"));
  const schemas = vendored.components.schemas as Record<string, any>;
  const ajv = new Ajv2020({ strict: false, validateFormats: false, validateSchema: false, allErrors: true, useDefaults: false });
  ajv.addSchema({ $id: ID, components: { schemas: adaptSchemas(schemas) } });
  // Every stream event of the Responses API by its `type`, so an event is checked against its own schema.
  const events = new Map<string, string>();
  for (const ref of schemas.ResponseStreamEvent.anyOf as { $ref: string }[]) {
    const name = ref.$ref.split("/").pop()!;
    const t = schemas[name].properties?.type;
    for (const type of t?.enum ?? (t?.const ? [t.const] : [])) events.set(type, name);
  }
  compiled = { ajv, events, source: vendored.source };
  return compiled;
}

/** The vendored description's origin (commit, date). */
export const openAISpecSource = () => load().source;

export function openAIValidator(schema: string): ValidateFunction {
  const v = load().ajv.getSchema(`${ID}#/components/schemas/${schema}`);
  if (!v) throw new Error(`${schema} is not in the vendored OpenAI description (scripts/vendor-openai-openapi.ts ROOTS)`);
  return v;
}

/** Errors of `value` against the named component schema, or [] when it conforms. */
export function openAIErrors(schema: string, value: unknown): string[] {
  const v = openAIValidator(schema);
  return v(value) ? [] : [describeAjvErrors(v.errors)];
}

/** Fails the test unless `value` conforms to the named component schema of OpenAI's description. */
export function expectOpenAIShape(schema: string, value: unknown, what = schema): void {
  const errors = openAIErrors(schema, value);
  expect(errors, `${what} does not conform to OpenAI's ${schema}:\n${errors.join("\n")}\n${JSON.stringify(value).slice(0, 1500)}`).toEqual([]);
}

/** The schema of a Responses stream event type (`response.output_text.delta`...), undefined when the spec has none. */
export function responseEventSchema(type: string): string | undefined {
  return load().events.get(type);
}

/** Fails unless the Responses stream event is one the description names and conforms to its schema. */
export function expectOpenAIResponseEvent(event: { type?: unknown } & Record<string, unknown>): void {
  const schema = typeof event.type === "string" ? responseEventSchema(event.type) : undefined;
  expect(schema, `Responses stream event type ${JSON.stringify(event.type)} is not in OpenAI's description`).toBeDefined();
  expectOpenAIShape(schema!, event, `event ${String(event.type)}`);
}

/** The schema of a 200 answer from the gateway's OpenAI-compatible routes (JSON), by method and path. */
function answerSchema(method: string, path: string): string | undefined {
  if (method === "POST" && /\/v1\/chat\/completions$/.test(path)) return "CreateChatCompletionResponse";
  if (method === "POST" && /\/v1\/responses$/.test(path)) return "Response";
  if (method === "GET" && /\/v1\/responses\/[^/]+$/.test(path)) return "Response";
  if (method === "GET" && /\/v1\/responses\/[^/]+\/input_items$/.test(path)) return "ResponseItemList";
  if (method === "POST" && /\/v1\/embeddings$/.test(path)) return "CreateEmbeddingResponse";
  if (method === "POST" && /\/v1\/images\/generations$/.test(path)) return "ImagesResponse";
  return undefined;
}

/**
 * An embeddings answer with `encoding_format: "base64"` (what the openai SDK asks for by default) as the SDK reads it:
 * the description types `embedding` as numbers only, the API sends little-endian float32 bytes in base64.
 */
function decodedEmbeddings(body: any): any {
  if (!Array.isArray(body?.data)) return body;
  const data = body.data.map((d: any) => {
    if (typeof d?.embedding !== "string") return d;
    const bytes = Buffer.from(d.embedding, "base64");
    if (bytes.length % 4 !== 0) return { ...d, embedding: `not float32 bytes: ${bytes.length} bytes` };
    return { ...d, embedding: Array.from({ length: bytes.length / 4 }, (_, i) => bytes.readFloatLE(i * 4)) };
  });
  return { ...body, data };
}

/** What is wrong with one stream event of a route, by OpenAI's description ([] when nothing). */
function eventErrors(path: string, data: string): string[] {
  if (data === "[DONE]") return [];
  const json = JSON.parse(data);
  if (/\/chat\/completions$/.test(path)) return json?.error ? [] : openAIErrors("CreateChatCompletionStreamResponse", json);
  const schema = typeof json?.type === "string" ? responseEventSchema(json.type) : undefined;
  return schema ? openAIErrors(schema, json) : [`event type ${JSON.stringify(json?.type)} is not in OpenAI's description`];
}

/**
 * A fetch for the openai client that checks every successful answer of the gateway's OpenAI-compatible routes (JSON
 * bodies and every stream event) against OpenAI's description, beside the client's own reading of it (a clone).
 * `check()` (in afterEach) waits for the reads and fails on anything found.
 */
export function openAIShapeChecker() {
  const found: string[] = [];
  const pending: Promise<void>[] = [];
  const inspect = async (res: Response, method: string, path: string) => {
    // A client that left a stream early aborts its request, and with it this copy: nothing to judge then.
    const text = await res.text().catch(() => undefined);
    if (text === undefined) return;
    const where = `${method} ${path}`;
    try {
      if ((res.headers.get("content-type") ?? "").startsWith("text/event-stream")) {
        for (const ev of new SseParser().push(`${text}\n\n`)) for (const e of eventErrors(path, ev.data)) found.push(`${where}, event ${ev.event ?? ""}: ${e}\n${ev.data.slice(0, 600)}`);
      } else {
        const schema = answerSchema(method, path);
        const body = schema === "CreateEmbeddingResponse" ? decodedEmbeddings(JSON.parse(text)) : JSON.parse(text);
        if (schema) for (const e of openAIErrors(schema, body)) found.push(`${where} (${schema}): ${e}\n${text.slice(0, 600)}`);
      }
    } catch (err) {
      found.push(`${where}: unreadable answer (${String(err)})`);
    }
  };
  const fetchChecked: typeof globalThis.fetch = async (input, init) => {
    const res = await globalThis.fetch(input, init);
    const url = new URL(typeof input === "string" ? input : input instanceof URL ? input.href : input.url);
    const method = (init?.method ?? (input instanceof Request ? input.method : "GET")).toUpperCase();
    const streamed = (res.headers.get("content-type") ?? "").startsWith("text/event-stream");
    if (res.status === 200 && (streamed || answerSchema(method, url.pathname))) pending.push(inspect(res.clone(), method, url.pathname));
    return res;
  };
  return {
    fetch: fetchChecked,
    async check(): Promise<void> {
      await Promise.allSettled(pending.splice(0));
      const seen = found.splice(0);
      expect(seen, `answers that do not conform to OpenAI's description:\n${seen.join("\n\n")}`).toEqual([]);
    },
  };
}
