// Validates Messages answers against the Anthropic SDK's own types (@anthropic-ai/sdk, a devDependency): the
// TypeScript compiler reads the SDK's declarations (`Message`, `RawMessageStreamEvent`, ...) and this turns them
// into JSON Schema for ajv, so what the tests check is what the SDK's users compile against — and moves with it.
//
// Two liberties, both as the API itself behaves: a property typed `T | null` may also be absent (the API leaves out
// null fields such as `container` or `usage.server_tool_use`), and extra properties are allowed (the API adds
// fields; the gateway adds providerMetadata). Everything else is checked: required properties, primitive types,
// string literal unions (stop_reason, block and event types), nested blocks.
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import ts from "typescript";
import { expect } from "vitest";
import Ajv2020Module, { type ValidateFunction } from "ajv/dist/2020.js";
import { describeAjvErrors } from "./ajv-errors.ts";

const Ajv2020 = Ajv2020Module.default ?? Ajv2020Module;
type Schema = Record<string, unknown>;

/** The SDK's declarations of the Messages API (the published .d.ts the SDK's users compile against). */
function sdkMessagesDts(): string {
  const main = createRequire(import.meta.url).resolve("@anthropic-ai/sdk"); // <package>/index.js
  return join(dirname(main), "resources", "messages", "messages.d.ts");
}

class SchemaBuilder {
  readonly defs: Record<string, Schema> = {};
  private readonly names = new Map<ts.Type, string>();
  constructor(private readonly checker: ts.TypeChecker) {}

  of(type: ts.Type): Schema {
    const f = type.flags;
    if (f & (ts.TypeFlags.Any | ts.TypeFlags.Unknown)) return {};
    if (f & ts.TypeFlags.StringLiteral) return { const: (type as ts.StringLiteralType).value };
    if (f & ts.TypeFlags.NumberLiteral) return { const: (type as ts.NumberLiteralType).value };
    if (f & ts.TypeFlags.BooleanLiteral) return { const: (type as unknown as { intrinsicName: string }).intrinsicName === "true" };
    if (f & ts.TypeFlags.String) return { type: "string" };
    if (f & ts.TypeFlags.Number) return { type: "number" };
    if (f & ts.TypeFlags.Boolean) return { type: "boolean" };
    if (f & ts.TypeFlags.Null) return { type: "null" };
    if (type.isUnion()) return this.union(type.types);
    // `string & {}` (open string unions such as Model) is a string.
    if (type.isIntersection()) {
      const prim = type.types.find((t) => t.flags & (ts.TypeFlags.String | ts.TypeFlags.Number));
      return prim ? this.of(prim) : { allOf: type.types.map((t) => this.of(t)) };
    }
    if (this.checker.isArrayType(type) || this.checker.isTupleType(type)) {
      const [item] = this.checker.getTypeArguments(type as ts.TypeReference);
      return { type: "array", items: item ? this.of(item) : {} };
    }
    if (f & ts.TypeFlags.Object) return this.object(type);
    return {};
  }

  private union(types: readonly ts.Type[]): Schema {
    const parts = types.filter((t) => !(t.flags & (ts.TypeFlags.Undefined | ts.TypeFlags.Void)));
    // true | false is how the compiler spells boolean.
    if (parts.length && parts.every((t) => t.flags & ts.TypeFlags.BooleanLiteral)) return { type: "boolean" };
    const schemas = parts.map((t) => this.of(t));
    // 'end_turn' | 'tool_use' | ... | null: one enum.
    if (schemas.every((s) => "const" in s || s.type === "null")) return { enum: schemas.map((s) => ("const" in s ? s.const : null)) };
    return schemas.length === 1 ? schemas[0]! : { anyOf: schemas };
  }

  /** Named object types go to $defs once (the SDK's types are recursive: blocks inside tool results...). */
  private object(type: ts.Type): Schema {
    const known = this.names.get(type);
    if (known) return { $ref: `#/$defs/${known}` };
    const base = type.aliasSymbol?.name ?? type.getSymbol()?.name ?? "Anonymous";
    let name = base.startsWith("__") ? "Anonymous" : base;
    for (let i = 2; this.defs[name] !== undefined; i++) name = `${base}${i}`;
    this.names.set(type, name);
    this.defs[name] = {};
    const properties: Record<string, Schema> = {};
    const required: string[] = [];
    for (const prop of this.checker.getPropertiesOfType(type)) {
      const decl = prop.valueDeclaration ?? prop.declarations?.[0];
      if (!decl) continue;
      const t = this.checker.getTypeOfSymbolAtLocation(prop, decl);
      if (t.getCallSignatures().length) continue; // methods are not data
      properties[prop.name] = this.of(t);
      const optional = (prop.flags & ts.SymbolFlags.Optional) !== 0;
      const nullable = t.isUnion() ? t.types.some((x) => x.flags & ts.TypeFlags.Null) : (t.flags & ts.TypeFlags.Null) !== 0;
      if (!optional && !nullable) required.push(prop.name);
    }
    const schema: Schema = { type: "object", properties };
    if (required.length) schema.required = required;
    this.defs[name] = schema;
    return { $ref: `#/$defs/${name}` };
  }
}

let cache: { schemas: Map<string, Schema>; ajv: InstanceType<typeof Ajv2020>; validators: Map<string, ValidateFunction> } | undefined;

/** JSON Schemas of the SDK's exported Messages types, built once per test process. */
function load() {
  if (cache) return cache;
  const file = sdkMessagesDts();
  const program = ts.createProgram([file], {
    noEmit: true, skipLibCheck: true, strict: true, types: [], lib: ["lib.es5.d.ts"],
    target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext,
  });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(file);
  const moduleSymbol = source && checker.getSymbolAtLocation(source);
  if (!moduleSymbol) throw new Error(`cannot read the Anthropic SDK's declarations at ${file}`);
  const exports = new Map(checker.getExportsOfModule(moduleSymbol).map((s) => [s.name, s]));
  cache = { schemas: new Map(), ajv: new Ajv2020({ strict: false, allErrors: true }), validators: new Map() };
  const built = cache;
  const schemaOf = (name: string): Schema => {
    const hit = built.schemas.get(name);
    if (hit) return hit;
    const sym = exports.get(name);
    if (!sym) throw new Error(`the Anthropic SDK exports no type ${name}`);
    const builder = new SchemaBuilder(checker);
    const root = builder.of(checker.getDeclaredTypeOfSymbol(sym));
    const schema = { ...root, $defs: builder.defs };
    built.schemas.set(name, schema);
    return schema;
  };
  Object.defineProperty(built, "schemaOf", { value: schemaOf });
  return built;
}

/** The JSON Schema derived from an exported type of the SDK's messages module (`Message`, `RawMessageStreamEvent`...). */
export function anthropicSchema(type: string): Schema {
  return (load() as unknown as { schemaOf(n: string): Schema }).schemaOf(type);
}

export function anthropicValidator(type: string): ValidateFunction {
  const c = load();
  let v = c.validators.get(type);
  if (!v) c.validators.set(type, (v = c.ajv.compile(anthropicSchema(type))));
  return v;
}

/** Errors of `value` against the SDK type, or [] when it conforms. */
export function anthropicErrors(type: string, value: unknown): string[] {
  const v = anthropicValidator(type);
  return v(value) ? [] : [describeAjvErrors(v.errors)];
}

/** Fails the test unless `value` is a valid instance of the SDK type. */
export function expectAnthropicShape(type: string, value: unknown, what = type): void {
  const errors = anthropicErrors(type, value);
  expect(errors, `${what} does not conform to the Anthropic SDK's ${type}:\n${errors.join("\n")}\n${JSON.stringify(value).slice(0, 1500)}`).toEqual([]);
}
