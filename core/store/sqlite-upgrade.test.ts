// Upgrading and downgrading a SQLite store with data: a file a newer release wrote is refused (start, check, usage)
// and left as it was; usage totals count the records an older release added after this one had opened the file; and
// `model-gateway usage` reads a file another gateway serves without migrating it under that gateway.
import { afterEach, describe, expect, it, vi } from "vitest";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { SqliteStore } from "./sqlite.ts";
import { createStore } from "./index.ts";
import { holdServingLock } from "./sqlite-process-lock.ts";
import { usageCommand } from "./usage-command.ts";
import { storeSchemaProblem } from "./schema-check.ts";
import { SCHEMA_VERSION } from "./schema-version.ts";
import { sqliteGatewayYaml } from "./sqlite-gateway-yaml.testkit.ts";
import type { LedgerRecord } from "../contracts/ledger-reader.ts";

let n = 0;
const T0 = Date.UTC(2026, 10, 20, 10, 30);
const rec = (over: Partial<LedgerRecord> = {}): LedgerRecord => ({
  generationId: `gen_${String(++n).padStart(4, "0")}`, requestId: `req_${n}`, ts: T0, keyId: "k", project: "acme", endpoint: "chat", model: "m",
  provider: "p", attempts: 1, inputTokens: 10, outputTokens: 20, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, images: 0,
  videoSeconds: 0, searchUnits: 0, webSearches: 0, costUsd: "0.05", costPico: 50_000_000_000n, latencyMs: 1, ttftMs: null, status: 200,
  outcome: "ok", sandbox: false, estimated: false, ...over,
});
const Q = { since: 0, until: T0 + 86_400_000 * 30, bucket: "none" as const, groupBy: [] };

/** A row as a release from before rollups (or any older one) put it straight into the ledger, rollups untouched. */
function oldReleaseWrites(path: string, r: LedgerRecord, alsoRollups = false): void {
  const db = new Database(path);
  db.prepare(`INSERT INTO ledger (generation_id, request_id, ts, key_id, project, endpoint, model, provider, attempts, input_tokens, output_tokens,
    cache_read_tokens, cache_write_tokens, reasoning_tokens, images, video_seconds, search_units, cost_usd, cost_pico, latency_ms, ttft_ms, status,
    outcome, sandbox, estimated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, 0, 0, 0, 0, 0, 0, ?, ?, 1, NULL, 200, 'ok', 0, 0)`)
    .run(r.generationId, r.requestId, r.ts, r.keyId, r.project, r.endpoint, r.model, r.provider, r.inputTokens, r.outputTokens, r.costUsd, r.costPico);
  if (alsoRollups) {
    // A release with rollups but without the high-water mark adds the row to them itself.
    for (const [table, ms] of [["ledger_hourly", 3_600_000], ["ledger_daily", 86_400_000]] as const) {
      db.prepare(`INSERT INTO ${table} (bucket, project, key_id, model, provider, endpoint, sandbox, requests, errors, input_tokens, output_tokens,
        cache_read_tokens, cache_write_tokens, reasoning_tokens, images, video_seconds, search_units, web_searches, cost_pico)
        VALUES (?, ?, ?, ?, ?, ?, 0, 1, 0, ?, ?, 0, 0, 0, 0, 0, 0, 0, ?)
        ON CONFLICT DO UPDATE SET requests = requests + 1, input_tokens = input_tokens + excluded.input_tokens,
          output_tokens = output_tokens + excluded.output_tokens, cost_pico = cost_pico + excluded.cost_pico`)
        .run(Math.floor(r.ts / ms) * ms, r.project, r.keyId, r.model, r.provider, r.endpoint, r.inputTokens, r.outputTokens, r.costPico);
    }
  }
  db.close();
}

async function totals(path: string): Promise<{ requests: number; costUsd: string }> {
  const s = new SqliteStore(path, { fsync: false });
  try {
    const [row] = await s.usage(Q);
    return { requests: row?.requests ?? 0, costUsd: row?.costUsd ?? "0" };
  } finally {
    await s.close();
  }
}

const dir = () => mkdtempSync(join(tmpdir(), "mg-sqlite-upgrade-"));
const meta = (path: string, name: string) => {
  const db = new Database(path, { readonly: true });
  try {
    return (db.prepare("SELECT value FROM meta WHERE name = ?").get(name) as { value: string } | undefined)?.value;
  } finally {
    db.close();
  }
};


async function runUsage(file: string): Promise<{ code: number; out: string; err: string }> {
  let out = "", err = "";
  const o = vi.spyOn(process.stdout, "write").mockImplementation((s) => ((out += String(s)), true));
  const e = vi.spyOn(process.stderr, "write").mockImplementation((s) => ((err += String(s)), true));
  try {
    const code = await usageCommand(["--config", file, "--json", "--since", "2026-11-01", "--until", "2026-12-01"]);
    return { code, out, err };
  } finally {
    o.mockRestore();
    e.mockRestore();
  }
}

afterEach(() => vi.restoreAllMocks());

describe("SQLite store schema version", () => {
  it("is stamped at open; a file a newer release wrote is refused at start, by check and by usage, and left untouched", async () => {
    const d = dir();
    const path = join(d, "gw.db");
    await new SqliteStore(path, { fsync: false }).close();
    expect(meta(path, "schema_version")).toBe(String(SCHEMA_VERSION.sqlite));

    const db = new Database(path);
    db.prepare("UPDATE meta SET value = '99' WHERE name = 'schema_version'").run();
    db.exec("DROP TABLE probe"); // a table this release would make again if it migrated the file
    db.close();
    const says = `was written by a newer release (schema 99, this release reads up to ${SCHEMA_VERSION.sqlite}): upgrade, or restore a backup`;

    // start
    await expect(createStore({ kind: "sqlite", path }, d, undefined, { verify: { integrity: "quick", requirePersistence: true, epochFile: join(d, "epochs.json") } })).rejects.toThrow(says);
    // check
    const file = sqliteGatewayYaml(d);
    const problem = await storeSchemaProblem({ kind: "sqlite", path: "./gw.db" }, d, file);
    expect(problem?.message).toContain(says);
    expect(problem?.line).toBe(1);
    // usage
    const u = await runUsage(file);
    expect(u.code).toBe(1);
    expect(u.err).toContain(says);

    const after = new Database(path, { readonly: true });
    expect(after.prepare("SELECT name FROM sqlite_master WHERE name = 'probe'").get()).toBeUndefined();
    after.close();
    // The serving lock was let go: once the file is restored, a gateway starts on it.
    const lock = holdServingLock(path);
    lock.release();
  });

  it("a file from before versions (or an older one) is migrated and stamped", async () => {
    const d = dir();
    const path = join(d, "gw.db");
    const db = new Database(path);
    db.exec("CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL); INSERT INTO meta VALUES ('schema_version', '0')");
    db.close();
    expect(await storeSchemaProblem({ kind: "sqlite", path }, d, sqliteGatewayYaml(d))).toBeUndefined();
    await new SqliteStore(path, { fsync: false }).close();
    expect(meta(path, "schema_version")).toBe(String(SCHEMA_VERSION.sqlite));
  });
});

describe("SQLite usage rollups across upgrades and downgrades", () => {
  it("count the records an older release wrote after this one had opened the file (upgrade after a usage run, downgrade and re-upgrade)", async () => {
    const path = join(dir(), "gw.db");
    const s = new SqliteStore(path, { fsync: false });
    for (let i = 0; i < 3; i++) await s.record(rec());
    await s.close();
    expect(await totals(path)).toEqual({ requests: 3, costUsd: "0.15" });

    // Downgraded: the old release adds records to the ledger only.
    for (let i = 0; i < 4; i++) oldReleaseWrites(path, rec({ ts: T0 + 86_400_000 }));
    expect(await totals(path)).toEqual({ requests: 7, costUsd: "0.35" });
    // Opened again (idempotent): nothing counted twice.
    expect(await totals(path)).toEqual({ requests: 7, costUsd: "0.35" });

    // This release writes again, then the old one, then this one: every record once.
    const again = new SqliteStore(path, { fsync: false });
    await again.record(rec());
    await again.close();
    oldReleaseWrites(path, rec());
    expect(await totals(path)).toEqual({ requests: 9, costUsd: "0.45" });
  });

  it("a release that added its rows to the rollups itself is not counted twice", async () => {
    const path = join(dir(), "gw.db");
    await new SqliteStore(path, { fsync: false }).close();
    for (let i = 0; i < 2; i++) oldReleaseWrites(path, rec(), true);
    expect(await totals(path)).toEqual({ requests: 2, costUsd: "0.1" });
  });

  it("a file whose rollups were built by a release without the high-water mark is summed again from the ledger once", async () => {
    const path = join(dir(), "gw.db");
    const s = new SqliteStore(path, { fsync: false });
    await s.record(rec());
    await s.close();
    // As the release before this fix left it: rollups marked built, no mark, and older rows missing from them.
    const db = new Database(path);
    db.exec("DELETE FROM meta WHERE name = 'rollup_rowid'");
    db.close();
    oldReleaseWrites(path, rec());
    expect(await totals(path)).toEqual({ requests: 2, costUsd: "0.1" });
  });
});

describe("model-gateway usage on a SQLite file", () => {
  it("reads a file another gateway serves without migrating it, records still in the journal included", async () => {
    const d = dir();
    const file = sqliteGatewayYaml(d);
    const path = join(d, "gw.db");
    // An older release's file, served: no schema version, no probe table.
    const s = new SqliteStore(path, { fsync: false });
    await s.record(rec());
    await s.close();
    const db = new Database(path);
    db.exec("DELETE FROM meta WHERE name = 'schema_version'; DROP TABLE probe");
    db.close();
    const lock = holdServingLock(path);
    try {
      // A record the serving gateway journaled and has not moved yet.
      const raw = new Database(path);
      raw.prepare(`INSERT INTO ledger_journal (generation_id, request_id, ts, key_id, project, endpoint, model, provider, attempts, input_tokens,
        output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens, images, video_seconds, search_units, cost_usd, cost_pico, latency_ms,
        ttft_ms, status, outcome, sandbox, estimated) VALUES ('gen_j', 'req_j', ?, 'k', 'acme', 'chat', 'm', 'p', 1, 10, 20, 0, 0, 0, 0, 0, 0, '0.05',
        50000000000, 1, NULL, 200, 'ok', 0, 0)`).run(T0);
      raw.close();
      const u = await runUsage(file);
      expect(u.err).toBe("");
      expect(u.code).toBe(0);
      expect(JSON.parse(u.out)).toMatchObject([{ project: "acme", model: "m", requests: 2, costUsd: "0.1" }]);
      const after = new Database(path, { readonly: true });
      expect(after.prepare("SELECT name FROM sqlite_master WHERE name = 'probe'").get()).toBeUndefined();
      expect(after.prepare("SELECT value FROM meta WHERE name = 'schema_version'").get()).toBeUndefined();
      expect((after.prepare("SELECT COUNT(*) AS c FROM ledger_journal").get() as { c: number }).c).toBe(1);
      after.close();
    } finally {
      lock.release();
    }
  });

  it("reads a file nobody serves as it is: never migrated or locked, rows an older release added since counted", async () => {
    const d = dir();
    const file = sqliteGatewayYaml(d);
    const path = join(d, "gw.db");
    const s = new SqliteStore(path, { fsync: false });
    await s.record(rec());
    await s.close();
    oldReleaseWrites(path, rec()); // past the rollups' high-water mark
    const before = { schema: meta(path, "schema_version"), mark: meta(path, "rollup_rowid") };
    // A gateway starting while the report runs is not refused: the report never takes the serving lock.
    const lock = holdServingLock(path);
    try {
      const u = await runUsage(file);
      expect(u.err).toBe("");
      expect(JSON.parse(u.out)).toMatchObject([{ requests: 2, costUsd: "0.1" }]);
    } finally {
      lock.release();
    }
    const u = await runUsage(file);
    expect(JSON.parse(u.out)).toMatchObject([{ requests: 2, costUsd: "0.1" }]);
    expect({ schema: meta(path, "schema_version"), mark: meta(path, "rollup_rowid") }).toEqual(before);
  });

  it("a file too old to have rollups is reported (start the gateway once), not migrated", async () => {
    const d = dir();
    const file = sqliteGatewayYaml(d);
    const path = join(d, "gw.db");
    await new SqliteStore(path, { fsync: false }).close();
    const db = new Database(path);
    db.exec("DROP TABLE ledger_hourly; DROP TABLE ledger_daily; DELETE FROM meta");
    db.close();
    const u = await runUsage(file);
    expect(u.code).toBe(1);
    expect(u.err).toMatch(/is from a release without usage rollups.*start the gateway \(this release\) on it once/);
    const after = new Database(path, { readonly: true });
    expect(after.prepare("SELECT name FROM sqlite_master WHERE name = 'ledger_hourly'").get()).toBeUndefined();
    after.close();
    // Without holding it: no serving lock was left behind either.
    holdServingLock(path).release();
  });
});
