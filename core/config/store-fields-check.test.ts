// A store setting of another kind (a Redis url on SQLite, a path on the memory store) was accepted and never read.
// check, start and a reload (all loadConfig) refuse it at the field, naming the kind it belongs to.
import { describe, expect, it } from "vitest";
import { loadConfig } from "./load.ts";
import { problems, write } from "./config.testkit.ts";

async function notices(text: string, env: Record<string, string> = {}): Promise<string[]> {
  const out: string[] = [];
  await loadConfig(write(text), { env, onNotice: (m) => out.push(m) });
  return out.filter((m) => m.startsWith("store."));
}

describe("store settings of another kind", () => {
  it("refuses a Redis url on SQLite and a path on the memory store, naming the kind they belong to", async () => {
    expect(await problems(`store: { kind: sqlite, path: ./gw.db, url: "redis://x", prefix: "mg:" }\n`)).toEqual([
      "F:1:39: store.url: a setting of store kind redis, not sqlite: this store would never read it (remove it, or fix kind)",
      "F:1:57: store.prefix: a setting of store kind redis, not sqlite: this store would never read it (remove it, or fix kind)",
    ]);
    expect(await problems(`store: { kind: memory, path: ./gw.db, fsync: false }\n`)).toEqual([
      "F:1:24: store.path: a setting of store kind sqlite, not memory: this store would never read it (a memory store keeps nothing: everything is lost on exit) (remove it, or fix kind)",
      "F:1:39: store.fsync: a setting of store kind sqlite, not memory: this store would never read it (a memory store keeps nothing: everything is lost on exit) (remove it, or fix kind)",
    ]);
    expect(await problems(`store: { kind: redis, url: "redis://x", prefix: "mg:", integrity_check: full }\n`)).toEqual([
      "F:1:56: store.integrity_check: a setting of store kind sqlite, not redis: this store would never read it (remove it, or fix kind)",
    ]);
  });

  it("takes each kind's own settings, those every kind reads, and a setting a ${VAR:-} left empty", async () => {
    expect(await problems(`store: { kind: sqlite, path: ./gw.db, fsync: false, integrity_check: full, spool_dir: ./spool, timeout_ms: 500, url: "\${REDIS_URL:-}" }\n`)).toEqual([]);
    expect(await problems(`store: { kind: memory, timeout_ms: 500, key_refresh_ms: 1000 }\n`)).toEqual([]);
  });

  it("takes one file for a SQLite dev and a Redis prod, kind from a variable, noting the setting the kind in force skips", async () => {
    const both = `store: { kind: "\${STORE_KIND:-sqlite}", path: "\${STORE_PATH:-./gw.db}", url: "\${REDIS_URL:-redis://127.0.0.1:6379}" }\n`;
    expect(await problems(both)).toEqual([]);
    expect(await problems(both, { STORE_KIND: "redis" })).toEqual([]);
    expect(await notices(both)).toEqual([
      "store.url: a setting of store kind redis, not read while store.kind is sqlite (taken, as store.kind comes from ${STORE_KIND:-sqlite})",
    ]);
    expect(await notices(both, { STORE_KIND: "redis" })).toEqual([
      "store.path: a setting of store kind sqlite, not read while store.kind is redis (taken, as store.kind comes from ${STORE_KIND:-sqlite})",
    ]);
    expect(await problems(`store: { kind: "\${STORE_KIND:-memory}", path: ./gw.db }\n`)).toEqual([]);
  });

  it("notes a setting of another kind written as a ${VAR:-default}, and still refuses the one written out", async () => {
    const text = `store: { kind: sqlite, path: ./gw.db, url: "\${REDIS_URL:-}", prefix: "\${REDIS_PREFIX:-mg:}" }\n`;
    expect(await problems(text)).toEqual([]);
    expect(await notices(text)).toEqual([
      "store.prefix: a setting of store kind redis, not read while store.kind is sqlite (taken, as it comes from ${REDIS_PREFIX:-mg:})",
    ]);
    expect(await problems(`store: { kind: sqlite, path: ./gw.db, url: "\${REDIS_URL:-}", prefix: "mg:" }\n`)).toEqual([
      "F:1:62: store.prefix: a setting of store kind redis, not sqlite: this store would never read it (remove it, or fix kind)",
    ]);
  });
});
