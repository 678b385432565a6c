// Two gateways on different SQLite stores sharing one spool_dir (the default ./data/spool is shared by every config
// in one directory). Gateway A's disk goes read-only, it answers and spools, and is killed. Gateway B, started on the
// same spool_dir, must not put A's records in its own ledger (they would be billed to a project B does not even
// have, and missing from A's); A, restarted once its disk is repaired, replays every one of them into its own.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import YAML from "yaml";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { startChildGateway, type ChildGateway } from "./helpers/child-gateway.ts";
import { OTHER, policyConfig } from "./helpers/policy-config.ts";
import { startLoad } from "./helpers/outage-load.ts";
import { loopFs, type LoopFs } from "./helpers/loop-fs.ts";
import { SqliteStore } from "../core/store/sqlite.ts";
import { sleep, until } from "./helpers/until.ts";

async function ledgerIds(path: string): Promise<string[]> {
  const store = new SqliteStore(path);
  try {
    return (await store.ledger({})).map((e) => e.requestId);
  } finally {
    await store.close();
  }
}

const fs = loopFs(32);
const skip = "skip" in fs ? fs.skip : undefined;
if (skip) console.warn(`spool-shared-dir: skipped — ${skip}`);

describe.skipIf(skip !== undefined)("gateways on different stores sharing a spool_dir", () => {
  const disk = fs as LoopFs;
  let fake: FakeOpenAI;
  let dir: string;
  const gws: ChildGateway[] = [];

  beforeAll(async () => {
    fake = await startFakeOpenAI({ chunkDelayMs: 1 });
    dir = mkdtempSync(join(tmpdir(), "mg-shared-spool-"));
  });
  afterAll(async () => {
    for (const g of gws) await g.kill9().catch(() => {});
    await fake?.close();
    disk.remove();
  });

  const configFile = (name: string, dbPath: string) => {
    const file = join(dir, `${name}.yaml`);
    writeFileSync(file, YAML.stringify(policyConfig(fake.baseUrl, {
      store: { kind: "sqlite", path: dbPath, spool_dir: join(dir, "spool"), timeout_ms: 250, probe_interval_ms: 200 },
    })));
    return file;
  };
  const start = async (file: string) => {
    const gw = await startChildGateway(file);
    gws.push(gw);
    return gw;
  };
  const spoolRecords = async (gw: ChildGateway) => ((await (await fetch(`${gw.url}/readyz`)).json()) as any).checks.store.spool.records as number;

  it("the other store's gateway leaves the records alone; their own gateway replays them", async () => {
    const aDb = join(disk.dir, "a.db");
    const bDb = join(dir, "b.db");
    const aConfig = configFile("a", aDb);
    const bConfig = configFile("b", bDb);

    let a = await start(aConfig);
    disk.failReadOnly();
    const load = startLoad([a.baseURL], { clients: 4, keys: [OTHER], max: 20 });
    await load.done;
    await load.stop();
    const answered = load.sent.filter((s) => s.answered).map((s) => s.requestId);
    expect(answered.length).toBeGreaterThan(0);
    await until("A's records in the spool", async () => ((await spoolRecords(a)) >= answered.length ? true : undefined));
    await a.kill9();

    const b = await start(bConfig);
    await sleep(500);
    expect(await spoolRecords(b)).toBe(0);
    await b.stop();
    expect(b.output()).not.toContain("spool: adopted the records of a process that is gone");
    expect(b.output()).toContain("spool: left alone the records of a gone process on another store");
    expect(await ledgerIds(bDb)).toEqual([]);
    expect(readdirSync(join(dir, "spool")).some((f) => f.endsWith(".jsonl") && f.startsWith("ledger."))).toBe(true);

    disk.repair();
    a = await start(aConfig);
    await until("A's replay", async () => ((await spoolRecords(a)) === 0 ? true : undefined));
    await a.stop();
    expect(a.output()).toContain("spool: adopted the records of a process that is gone");
    const ids = new Set(await ledgerIds(aDb));
    expect(answered.filter((id) => !ids.has(id))).toEqual([]);
  }, 60_000);
});
