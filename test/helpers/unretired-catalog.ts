// The default catalog's entries that have an endpoint with `retires:`, re-declared as an operator's own entries
// without it (same endpoints, same prices). Tests that exercise what such a model does upstream (reasoning
// parameters, image tiers, the agents' recorded models) run against fakes, where no shutdown date applies; what
// retirement itself does is test/catalog-retirement.e2e.test.ts's, on the catalog as shipped.
import { readFileSync } from "node:fs";
import YAML from "yaml";

export function unretiredEntries(catalogFiles: string[]): Record<string, any> {
  const own: Record<string, any> = {};
  for (const file of catalogFiles) {
    for (const [id, entry] of Object.entries<any>(YAML.parse(readFileSync(file, "utf8")).models ?? {})) {
      if (!entry.endpoints.some((ep: any) => ep.retires !== undefined)) continue;
      own[id] = { ...entry, endpoints: entry.endpoints.map(({ retires: _r, replacement: _s, ...ep }: any) => ep) };
    }
  }
  return own;
}
