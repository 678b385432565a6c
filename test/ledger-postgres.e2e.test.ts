// The ledger on a real PostgreSQL behind two gateway replicas sharing a real Redis (store.ledger: postgres):
// 10 000 requests over many projects, keys and models land exactly once and every rollup equals the sum of its
// raw records; Postgres down for 30 s under load fails no request and loses no record (they wait in each replica's
// spool, a metric says so, and they are written when it is back); Redis restarted without its data gets every
// project's spend rebuilt from Postgres's rollups instead of refusing budgets.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { fileURLToPath } from "node:url";
import YAML from "yaml";
import pg from "pg";
import { Redis } from "ioredis";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { startRedis, type TestRedis } from "./helpers/redis.ts";
import { startPostgres, type TestPostgres } from "./helpers/postgres.ts";
import { startChildGateway, type ChildGateway } from "./helpers/child-gateway.ts";
import { keyEntry, testKey } from "./helpers/gateway.ts";
import { policyConfig } from "./helpers/policy-config.ts";
import { ledgerGaps, startLoad, type Sent } from "./helpers/outage-load.ts";
import { periodOf } from "../core/store/periods.ts";
import { sleep, until as untilWithin } from "./helpers/until.ts";
import { awayFromPeriodEnd } from "./helpers/period-end.ts";

/** Postgres and the replay are slower: up to a minute, polled every 100 ms. */
const until = <T,>(what: string, f: () => Promise<T | undefined>, ms = 60_000) => untilWithin(what, f, ms, 100);
const ROOT = fileURLToPath(new URL("..", import.meta.url));
const PROJECTS = 12;
const KEYS_PER_PROJECT = 3;
/** Three priced models, and one whose only upstream refuses connections (its records are errors). */
const MODELS = ["openai/gpt-4o-mini", "openai/gpt-4o", "anthropic/claude-x", "broken/model"];
const GOOD_MODELS = MODELS.slice(0, 3);
/** Every rollup row differs from the raw records' sums for its group and bucket (SQL EXCEPT, both ways): none may. */
const ROLLUP_DIFF = (table: string, bucketMs: number) => `
  WITH raw AS (
    SELECT (ts / ${bucketMs}) * ${bucketMs} AS bucket, project, key_id, model, provider, endpoint, sandbox, count(*) AS requests,
      count(*) FILTER (WHERE status >= 400 OR outcome <> 'ok') AS errors, sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens,
      sum(cache_read_tokens) AS cache_read_tokens, sum(cost_pico) AS cost_pico
    FROM mg_ledger GROUP BY 1, 2, 3, 4, 5, 6, 7),
  roll AS (SELECT bucket, project, key_id, model, provider, endpoint, sandbox, requests, errors, input_tokens, output_tokens, cache_read_tokens, cost_pico FROM ${table})
  SELECT count(*)::int AS n FROM ((SELECT * FROM raw EXCEPT SELECT * FROM roll) UNION ALL (SELECT * FROM roll EXCEPT SELECT * FROM raw)) d`;

describe("usage ledger on Postgres, two replicas on one Redis", () => {
  let redis: TestRedis;
  let postgres: TestPostgres;
  let fake: FakeOpenAI;
  let db: pg.Client;
  let dbUrl: string;
  let configFile: string;
  let gws: ChildGateway[] = [];
  const prefix = "mgpg:";
  const keys: string[] = [];

  beforeAll(async () => {
    // Durable (fsync, synchronous_commit on, as in production): the outage is an immediate shutdown, which loses
    // commits a server without them had acknowledged.
    [redis, postgres, fake] = await Promise.all([startRedis(), startPostgres({ durable: true }), startFakeOpenAI()]);
    dbUrl = await postgres.createDatabase("ledger");
    db = new pg.Client({ connectionString: dbUrl });
    db.on("error", () => {}); // the outage test kills the server under it; it reconnects below
    await db.connect();
    const dir = mkdtempSync(join(tmpdir(), "mg-pg-e2e-"));
    const base = policyConfig(fake.baseUrl, {});
    const projects: Record<string, unknown> = {};
    for (let p = 0; p < PROJECTS; p++) {
      const entries = [];
      for (let k = 0; k < KEYS_PER_PROJECT; k++) {
        const key = testKey(`p${p}k${k}`);
        keys.push(key);
        entries.push(keyEntry(`k${k}`, key));
      }
      // Budgets on half the projects (never reached): their spend lives in Redis and is rebuilt from Postgres.
      projects[`proj${p}`] = { keys: entries, ...(p % 2 === 0 ? { budget: { usd: "100000", period: "month" } } : {}) };
    }
    const config = {
      ...base,
      store: {
        kind: "redis", url: redis.url, prefix, timeout_ms: 1000, probe_interval_ms: 200,
        ledger: { kind: "postgres", url: dbUrl, flush_interval_ms: 100, batch_size: 500 },
      },
      providers: { ...base.providers, down: { protocol: "openai", base_url: "http://127.0.0.1:9/v1", api_key: "sk-none" } },
      models: {
        ...base.models,
        "broken/model": { type: "language", context_window: 1000, max_tokens: 100, endpoints: [{ provider: "down", model: "x", pricing: { input: "0.000001", output: "0.000002" } }] },
      },
      projects,
      metrics: { project_labels: false },
    };
    configFile = join(dir, "gateway.yaml");
    writeFileSync(configFile, YAML.stringify(config));
    // Each replica its own spool directory, as on separate machines.
    gws = await Promise.all([0, 1].map(async (i) => {
      const f = join(dir, `gateway-${i}.yaml`);
      writeFileSync(f, YAML.stringify({ ...config, store: { ...config.store, spool_dir: `./spool-${i}` } }));
      return startChildGateway(f);
    }));
  }, 120_000);

  afterAll(async () => {
    for (const g of gws) await g.kill9();
    await db?.end().catch(() => {});
    await Promise.all([fake?.close(), redis?.stop(), postgres?.stop()]);
  });

  // Spend is read for the month: each test (up to 240 s) runs within one month.
  beforeEach(() => awayFromPeriodEnd("month", 245_000), 250_000);

  /** Both replicas wrote everything they spooled for Postgres. */
  async function drained(): Promise<void> {
    for (const g of gws) {
      await until(`${g.url} to write its spool to Postgres`, async () => {
        const body = await (await fetch(`${g.url}/readyz`)).json();
        return body.checks.ledger.status === "up" && body.checks.ledger.pending === 0 ? true : undefined;
      });
    }
  }

  async function ledgerIds(): Promise<string[]> {
    return (await db.query<{ request_id: string }>("SELECT request_id FROM mg_ledger")).rows.map((r) => r.request_id);
  }

  async function expectRollupsEqualRaw(): Promise<void> {
    for (const [table, ms] of [["mg_ledger_hourly", 3_600_000], ["mg_ledger_daily", 86_400_000]] as const) {
      expect((await db.query(ROLLUP_DIFF(table, ms))).rows[0].n, table).toBe(0);
    }
  }

  it("10 000 requests over 12 projects, 36 keys and 4 models: each answered one recorded once, every rollup the sum of its records", async () => {
    const load = startLoad(gws.map((g) => g.baseURL), { clients: 16, keys, models: MODELS, rotate: true, max: 10_000 });
    await load.done;
    await load.stop();
    expect(load.sent).toHaveLength(10_000);
    // Only answers, and the broken model's upstream error.
    const failed = load.sent.filter((s) => s.status !== 200);
    expect(new Set(failed.map((s) => `${s.status} ${s.code}`))).toEqual(new Set(["502 UPSTREAM_ERROR"]));
    // floor(i / 36) % 4 picks the model of request i: the broken one for 2 500 of 10 000 (give or take the last round).
    expect(failed.length).toBeGreaterThan(2400);
    await drained();
    const ids = await ledgerIds();
    const gaps = ledgerGaps(load.sent, ids);
    expect(gaps.lost).toEqual([]);
    expect(gaps.twice).toEqual([]);
    // Every answer, and the failures that reached the upstream (once the broken model's circuit opens, its requests
    // are refused before any attempt: nothing to record).
    const answered = load.sent.filter((s) => s.answered).length;
    expect(answered).toBe(10_000 - failed.length);
    expect(ids.length).toBeGreaterThan(answered);
    await expectRollupsEqualRaw();
    const totals = (await db.query("SELECT sum(requests)::int AS requests, sum(errors)::int AS errors, count(DISTINCT key_id || project)::int AS keys, count(DISTINCT model)::int AS models FROM mg_ledger_daily")).rows[0];
    expect(totals).toEqual({ requests: ids.length, errors: ids.length - answered, keys: PROJECTS * KEYS_PER_PROJECT, models: 4 });
    // Each record keeps its attempts: the broken model's failed attempts (a retry included), by name.
    const broken = (await db.query("SELECT attempts, attempt_list FROM mg_ledger WHERE model = 'broken/model' LIMIT 1")).rows[0];
    expect(broken.attempt_list).toHaveLength(broken.attempts);
    for (const a of broken.attempt_list) expect(a).toMatchObject({ model: "broken/model", provider: "down", status: 502, error: "UPSTREAM_ERROR" });

    // Spend in Redis (what budgets read) agrees with Postgres, project by project.
    const month = periodOf("month", Date.now());
    const r = new Redis(redis.url);
    try {
      for (const { project, pico } of (await db.query("SELECT project, sum(cost_pico)::text AS pico FROM mg_ledger GROUP BY project")).rows) {
        expect(await r.get(`${prefix}spend:${project}:${month.key}`), project).toBe(pico);
      }
    } finally {
      r.disconnect();
    }

    // `model-gateway usage` answers from the rollups: the same totals per model.
    const { stdout } = await promisify(execFile)(process.execPath, ["bin/model-gateway.mjs", "usage", "--config", configFile, "--group-by", "model", "--json"], { cwd: ROOT });
    const rows = JSON.parse(stdout) as { model: string; requests: number; errors: number; costUsd: string }[];
    expect(rows.map((x) => x.model)).toEqual(MODELS.slice().sort());
    expect(rows.reduce((n, x) => n + x.requests, 0)).toBe(ids.length);
    expect(rows.find((x) => x.model === "broken/model")).toMatchObject({ requests: ids.length - answered, errors: ids.length - answered, costUsd: "0" });
  }, 240_000);

  it("Postgres down for 30 s under load: no request fails, nothing is lost, the metric shows the backlog", async () => {
    const before = new Set(await ledgerIds());
    const load = startLoad(gws.map((g) => g.baseURL), { clients: 8, keys, models: GOOD_MODELS, rotate: true, pauseMs: 10 });
    await until("traffic", async () => (load.sent.filter((s) => s.answered).length >= 100 ? true : undefined));
    await postgres.kill();
    const downAt = Date.now();
    // While it is down: records pile up in the replicas' spools, and the metrics say so.
    const during = await until("the metric to show Postgres down with records waiting", async () => {
      const text = await (await fetch(gws[0]!.metricsUrl!)).text();
      const up = /^gateway_ledger_postgres_up (\d)/m.exec(text)?.[1];
      const pending = Number(/^gateway_ledger_postgres_pending_records (\d+)/m.exec(text)?.[1] ?? 0);
      return up === "0" && pending > 50 ? { pending } : undefined;
    });
    expect(during.pending).toBeGreaterThan(50);
    // Meanwhile the replicas stay ready: the ledger waiting is not an outage of the gateway.
    expect((await fetch(`${gws[1]!.url}/readyz`)).status).toBe(200);
    await sleep(Math.max(0, 30_000 - (Date.now() - downAt)));
    await postgres.restart();
    const upAt = Date.now();
    await until("answers after Postgres is back", async () => (load.sent.some((s) => s.answered && s.at > upAt - performance.timeOrigin) ? true : undefined));
    await sleep(1000);
    await load.stop();
    await drained();
    const sent = load.sent;
    const failed = sent.filter((s: Sent) => s.status !== 200 || !s.answered);
    expect(failed.map((s) => `${s.status} ${s.code} ${Math.round(s.at)} ${Math.round(s.ms)}`)).toEqual([]);
    const duringOutage = sent.filter((s) => s.end >= downAt - performance.timeOrigin && s.at <= upAt - performance.timeOrigin);
    expect(duringOutage.length).toBeGreaterThan(200);
    await db.end().catch(() => {});
    db = new pg.Client({ connectionString: dbUrl });
    db.on("error", () => {});
    await db.connect();
    const ids = (await ledgerIds()).filter((id) => !before.has(id));
    const gaps = ledgerGaps(sent, ids);
    expect(gaps.lost).toEqual([]);
    expect(gaps.twice).toEqual([]);
    expect(ids.length).toBe(sent.length);
    await expectRollupsEqualRaw();
    expect(gws.map((g) => g.output()).join("")).toContain("Postgres does not take records");
  }, 180_000);

  it("Redis restarted without its data: spend is rebuilt from Postgres's rollups, budgets keep working", async () => {
    const month = periodOf("month", Date.now());
    // This month's: the tests before may have run in the last one.
    const monthSpend = async () => new Map((await db.query("SELECT project, sum(cost_pico)::text AS pico FROM mg_ledger_daily WHERE bucket >= $1 GROUP BY project", [month.start])).rows.map((r) => [r.project, r.pico]));
    const want = await monthSpend();
    await redis.restart({ aof: true, freshDir: true });
    // A budgeted project is served again (no 503 state_lost) once a replica has rebuilt spend.
    const key = keys[0]!; // proj0 has a budget
    for (const g of gws) {
      await until(`${g.url} to serve a budgeted request`, async () => {
        const res = await fetch(`${g.baseURL}/chat/completions`, {
          method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
          body: JSON.stringify({ model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "hi" }], max_tokens: 5 }),
        });
        await res.text();
        return res.status === 200 ? true : undefined;
      });
    }
    await drained();
    const r = new Redis(redis.url);
    try {
      const now = await monthSpend();
      for (const [project, pico] of want) {
        // What Postgres held, plus the requests just sent (proj0's), exactly.
        expect(await r.get(`${prefix}spend:${project}:${month.key}`), project).toBe(now.get(project));
        if (project !== "proj0") expect(now.get(project)).toBe(pico);
      }
    } finally {
      r.disconnect();
    }
    // A replica's log reaches its stderr in batches (at least every 250 ms): the line of the rebuild that let the
    // budgeted requests above through may not be out yet.
    const rebuilt = "spend rebuilt from the ledger's rollups";
    await until("the rebuild's log line", async () => (gws.some((g) => g.output().includes(rebuilt)) ? true : undefined), 5000);
    const out = gws.map((g) => g.output()).join("");
    expect(out).not.toContain("budgets are refused until an operator acts");
    expect(out).toContain(rebuilt);
  }, 120_000);
});
