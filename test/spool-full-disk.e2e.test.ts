// The review's reproduction: a gateway on Redis, Redis gone, and the spool_dir's filesystem (a real, small ext4)
// filling up while requests keep being answered. A full filesystem takes part of a write and fails only the next, so
// the gateway once counted records "durable" that were cut on disk, replayed all but those once Redis was back, and
// said nothing: answered, billed requests missing from the ledger. Every answered request must be in the ledger, once.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdirSync, mkdtempSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import YAML from "yaml";
import { ulid } from "ulid";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { startRedis, type TestRedis } from "./helpers/redis.ts";
import { startChildGateway, type ChildGateway } from "./helpers/child-gateway.ts";
import { OTHER, policyConfig } from "./helpers/policy-config.ts";
import { ledgerGaps, startLoad, type Sent } from "./helpers/outage-load.ts";
import { loopFs, type LoopFs } from "./helpers/loop-fs.ts";
import { until } from "./helpers/until.ts";
import { RedisStore } from "../core/store/redis.ts";

/** Room given back to the spool's filesystem each round: a few dozen records' lines, fewer than a round sends. */
const ROOM_BYTES = 16 * 1024;
const ROUNDS = 3;
const REQUESTS = 150;

const fs = loopFs(8);
const skip = "skip" in fs ? fs.skip : undefined;
if (skip) console.warn(`spool-full-disk: skipped — ${skip}`);

/** gateway_ledger_spooled_total{kept=...} from a /metrics text. */
const spooled = (metrics: string, kept: string) => Number(new RegExp(`^gateway_ledger_spooled_total\\{kept="${kept}"\\} (\\S+)$`, "m").exec(metrics)?.[1] ?? 0);

describe.skipIf(skip !== undefined)("Redis down and the spool_dir's disk filling up", () => {
  const disk = fs as LoopFs;
  let redis: TestRedis;
  let fake: FakeOpenAI;
  let gw: ChildGateway | undefined;
  const prefix = `mgfull-${ulid()}:`;

  beforeAll(async () => {
    redis = await startRedis();
    fake = await startFakeOpenAI({ chunkDelayMs: 1 });
  }, 60_000);
  afterAll(async () => {
    await gw?.kill9();
    await fake?.close();
    await redis?.stop();
    disk.remove();
  });

  it("every answered request is in the ledger once Redis is back; what the disk would not take was held and said so", async () => {
    const spoolDir = join(disk.dir, "spool");
    mkdirSync(spoolDir);
    const configFile = join(mkdtempSync(join(tmpdir(), "mg-full-spool-")), "gateway.yaml");
    writeFileSync(configFile, YAML.stringify(policyConfig(fake.baseUrl, {
      store: { kind: "redis", url: redis.url, prefix, spool_dir: spoolDir, timeout_ms: 250, probe_interval_ms: 200 },
    })));
    gw = await startChildGateway(configFile);

    // The disk fills up, takes a few more records whenever some room comes back, and fills up again: each time, a
    // write may be cut part way.
    disk.fill();
    const filler = join(disk.dir, "filler");
    await redis.kill();
    const sent: Sent[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      truncateSync(filler, statSync(filler).size - ROOM_BYTES);
      const load = startLoad([gw.baseURL], { clients: 4, keys: [OTHER], max: REQUESTS / ROUNDS });
      await load.done;
      await load.stop();
      sent.push(...load.sent);
    }
    expect(sent.filter((s) => s.answered).length).toBe(REQUESTS); // the project has no budget: answered without its store

    // The disk took some records and then no more: both kinds of keeping happened (else this proves nothing).
    const metrics = await (await fetch(gw.metricsUrl!)).text();
    expect(spooled(metrics, "durable")).toBeGreaterThan(0);
    expect(spooled(metrics, "memory")).toBeGreaterThan(0);
    expect(spooled(metrics, "durable") + spooled(metrics, "memory")).toBe(REQUESTS);
    expect(gw.output()).toMatch(/ledger record kept in memory only/);

    await redis.restart();
    // Held records wait for the disk's backoff (up to 30 s between tries): a loaded machine may take that long.
    await until("the spool replayed", async () => {
      const r = await fetch(`${gw!.url}/readyz`);
      return r.status === 200 && (await r.json()).checks.store.spool.records === 0 ? true : undefined;
    }, 90_000);
    const store = await RedisStore.connect(redis.url, prefix);
    try {
      const gaps = ledgerGaps(sent, (await store.ledger({})).map((e) => e.requestId));
      expect(gaps.lost).toEqual([]);
      expect(gaps.twice).toEqual([]);
    } finally {
      await store.close();
    }
  }, 180_000);
});
