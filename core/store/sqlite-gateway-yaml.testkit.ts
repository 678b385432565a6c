// For tests of the commands that read a SQLite store through gateway.yaml (check, keys, usage): a gateway.yaml in
// `dir` naming ./gw.db, with one priced model and one project key.
import { writeFileSync } from "node:fs";
import { join } from "node:path";

/** Writes `dir`/gw.yaml and returns its path; the store it names is `dir`/gw.db. */
export function sqliteGatewayYaml(dir: string): string {
  const file = join(dir, "gw.yaml");
  writeFileSync(file, `store: { kind: sqlite, path: ./gw.db }
providers:
  sim: { protocol: sim }
models:
  acme/m:
    name: M
    type: language
    context_window: 1000
    max_tokens: 100
    endpoints: [{ provider: sim, model: m, pricing: { input: "0.001", output: "0.002" } }]
projects:
  acme:
    keys: [{ id: k, sha256: "${"a".repeat(64)}" }]
`);
  return file;
}
