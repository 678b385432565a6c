// Every key of schemas/gateway.schema.json is in the README's config reference (the table under "Configuration"), so
// an operator who reads it learns of every setting: named in the key column (`server.port`, or a sibling after it:
// `server.host`, `port`), or under a key the table names — its name in that row's meaning, or in the page (a
// docs/*.md file, a README section) that row sends the reader to. A key added to the schema without a word there
// fails here.
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(fileURLToPath(new URL("..", import.meta.url)));
const read = (f: string) => readFileSync(join(ROOT, f), "utf8");

type Node = Record<string, any>;

interface SchemaKey {
  /** Maps' entries as `<*>`, array items as part of their array (`projects.<*>.keys.id`). */
  path: string;
  /** The same for every use of a shared definition (`Pricing.input` under models and under guardrails' moderation). */
  shape: string;
}

/** Every key of the schema. */
function schemaKeys(schema: Node): SchemaKey[] {
  const defs: Node = schema.definitions ?? {};
  const out = new Map<string, SchemaKey>();
  const walk = (node: Node, path: string, shape: string, depth: number): void => {
    while (node.$ref) {
      shape = String(node.$ref).split("/").pop()!;
      node = defs[shape];
    }
    if (depth > 12) return;
    for (const k of ["anyOf", "oneOf", "allOf"]) for (const b of node[k] ?? []) walk(b, path, shape, depth + 1);
    if (node.items && typeof node.items === "object") walk(node.items, path, shape, depth + 1);
    for (const [k, v] of Object.entries<Node>(node.properties ?? {})) {
      const key = { path: path ? `${path}.${k}` : k, shape: shape ? `${shape}.${k}` : k };
      out.set(key.path, key);
      walk(v, key.path, key.shape, depth + 1);
    }
    if (node.additionalProperties && typeof node.additionalProperties === "object") walk(node.additionalProperties, `${path}.<*>`, `${shape}.<*>`, depth + 1);
    for (const v of Object.values<Node>(node.patternProperties ?? {})) walk(v, `${path}.<*>`, `${shape}.<*>`, depth + 1);
  };
  walk(schema, "", "", 0);
  return [...out.values()];
}

interface Row { keys: string[]; meaning: string }

/** The README table's rows, their key column as full paths (`<name>`, `<id>` as `<*>`, no `[]`). */
function referenceRows(readme: string): Row[] {
  const start = readme.indexOf("| key | meaning |");
  expect(start).toBeGreaterThan(0);
  const lines = readme.slice(start).split("\n").slice(2);
  const rows: Row[] = [];
  for (const line of lines) {
    if (!line.startsWith("|")) break;
    const cells = line.split(/(?<!\\)\|/);
    const [keyCell, ...rest] = cells.slice(1, -1);
    let parent = "";
    const keys: string[] = [];
    for (const [, raw] of keyCell!.matchAll(/`([^`]+)`/g)) {
      const name = raw!.replace(/<[^>]+>/g, "<*>").replace(/\[\]/g, "");
      // `server.headers_timeout_ms`, `request_timeout_ms`: a bare name is a sibling of the last full path.
      const full = name.includes(".") ? name : parent ? `${parent}.${name}` : name;
      parent = full.includes(".") ? full.slice(0, full.lastIndexOf(".")) : "";
      keys.push(full);
    }
    rows.push({ keys, meaning: rest.join("|") });
  }
  return rows;
}

const globMatch = (pattern: string, path: string) =>
  new RegExp(`^${pattern.replace(/[.+?^${}()|\\]/g, "\\$&").replace(/\*/g, "[^.]*")}$`).test(path);

/** Words inside the text's `code` spans. */
const codeWords = (text: string) => new Set([...text.matchAll(/`([^`]+)`/g)].flatMap(([, c]) => c!.match(/[A-Za-z_][\w-]*/g) ?? []));

/** The pages a row links to: docs/*.md files whole, README anchors as their section. */
function linkedText(meaning: string, readme: string): string {
  let text = "";
  for (const [, target] of meaning.matchAll(/\]\(([^)]+)\)/g)) {
    const [file, anchor] = target!.split("#");
    if (file) text += read(file!);
    else if (anchor) {
      const heading = readme.split("\n").find((l) => /^#+ /.test(l) && slug(l) === anchor);
      if (!heading) continue;
      const from = readme.indexOf(heading);
      const level = heading.match(/^#+/)![0].length;
      const next = readme.slice(from + heading.length).search(new RegExp(`\\n#{1,${level}} `));
      text += readme.slice(from, next < 0 ? undefined : from + heading.length + next);
    }
  }
  return text;
}

const slug = (heading: string) => heading.replace(/^#+ /, "").toLowerCase().replace(/[^\w\- ]/g, "").replace(/ /g, "-");

function undocumented(): string[] {
  const readme = read("README.md");
  const rows = referenceRows(readme);
  const keys = schemaKeys(JSON.parse(read("schemas/gateway.schema.json")));
  const rowOf = (path: string) => rows.find((r) => r.keys.some((k) => globMatch(k, path)));
  const documented = (path: string): boolean => {
    if (rowOf(path)) return true;
    // A section whose keys have rows of their own (`projects`, `idempotency`).
    if (rows.some((r) => r.keys.some((k) => k.startsWith(`${path}.`)))) return true;
    const leaf = path.split(".").pop()!;
    // Under a key the table names: that row (or the page it links) names this one.
    for (let at = path.lastIndexOf("."); at > 0; at = path.lastIndexOf(".", at - 1)) {
      const row = rowOf(path.slice(0, at));
      if (row && (codeWords(row.meaning).has(leaf) || codeWords(linkedText(row.meaning, readme)).has(leaf))) return true;
    }
    return false;
  };
  // A shared definition's key is documented once for all its uses.
  const shapes = new Set(keys.filter((k) => documented(k.path)).map((k) => k.shape));
  return keys.filter((k) => !shapes.has(k.shape)).map((k) => k.path);
}

describe("README's config reference", () => {
  it("names every key of the config schema", () => {
    expect(undocumented()).toEqual([]);
  });

  it("lists every provider protocol the schema takes", () => {
    const schema = JSON.parse(read("schemas/gateway.schema.json"));
    const protocols: string[] = schema.definitions.ProviderConfig.properties.protocol.enum;
    const row = referenceRows(read("README.md")).find((r) => r.keys.includes("providers.<*>.protocol"))!;
    expect(protocols.filter((p) => !codeWords(row.meaning).has(p))).toEqual([]);
  });
});
