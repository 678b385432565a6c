// Vendors the parts of OpenAI's official OpenAPI description (github.com/openai/openai-openapi, openapi.json) that
// the tests validate the gateway's answers against: the response and stream-event schemas of chat completions,
// responses, embeddings and images, with every component schema they reference. The tests never fetch anything
// (CI has no internet); refresh the fixture by hand:
//
//   git clone --depth 1 https://github.com/openai/openai-openapi /tmp/openai-openapi
//   npx tsx scripts/vendor-openai-openapi.ts /tmp/openai-openapi
//
// It writes test/fixtures/openai-openapi/components.json: the schemas as they are in the source (test/helpers/
// openai-spec.ts adapts them for ajv), with the source commit and its date.
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** What the gateway answers on its OpenAI-compatible endpoints (JSON and text/event-stream). */
export const ROOTS = [
  "CreateChatCompletionResponse",
  "CreateChatCompletionStreamResponse",
  "CreateEmbeddingResponse",
  "ImagesResponse",
  "Response",
  "ResponseStreamEvent",
  "ResponseItemList",
] as const;

const REF = "#/components/schemas/";

/** The roots and every component schema reachable from them through $ref. */
export function closure(schemas: Record<string, unknown>, roots: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const queue = [...roots];
  while (queue.length) {
    const name = queue.pop()!;
    if (name in out) continue;
    const schema = schemas[name];
    if (schema === undefined) throw new Error(`component schema ${name} is not in the description`);
    out[name] = schema;
    JSON.stringify(schema, (k, v) => {
      if (k === "$ref" && typeof v === "string" && v.startsWith(REF)) queue.push(v.slice(REF.length));
      return v;
    });
  }
  return Object.fromEntries(Object.keys(out).sort().map((k) => [k, out[k]]));
}

function main(): void {
  const repo = process.argv[2];
  if (!repo) {
    console.error("usage: tsx scripts/vendor-openai-openapi.ts <checkout of github.com/openai/openai-openapi>");
    process.exit(2);
  }
  const git = (...args: string[]) => execFileSync("git", ["-C", repo, ...args], { encoding: "utf8" }).trim();
  const spec = JSON.parse(readFileSync(join(repo, "openapi.json"), "utf8"));
  const schemas = closure(spec.components.schemas, ROOTS);
  const out = {
    source: {
      repository: "https://github.com/openai/openai-openapi",
      file: "openapi.json",
      commit: git("rev-parse", "HEAD"),
      date: git("log", "-1", "--format=%cI"),
      openapi: spec.openapi,
      version: spec.info?.version,
      roots: ROOTS,
    },
    components: { schemas },
  };
  const root = join(dirname(fileURLToPath(import.meta.url)), "..");
  const file = join(root, "test", "fixtures", "openai-openapi", "components.json");
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(out, null, 1)}\n`);
  console.log(`wrote ${Object.keys(schemas).length} schemas from ${out.source.commit} (${out.source.date}) to ${file}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main();
