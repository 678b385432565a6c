// Two gateway processes on one redis-server: limits, budgets and idempotency hold across replicas.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, writeFileSync } from "node:fs";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { fileURLToPath } from "node:url";
import { tmpdir } from "node:os";
import { join } from "node:path";
import YAML from "yaml";
import Big from "big.js";
import { ulid } from "ulid";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { startChildGateway, type ChildGateway } from "./helpers/child-gateway.ts";
import { startRedis, type TestRedis } from "./helpers/redis.ts";
import { keyEntry, postJson, testKey } from "./helpers/gateway.ts";
import { auth, chat, KEY, policyConfig } from "./helpers/policy-config.ts";
import { RedisStore } from "../core/store/redis.ts";
import { periodOf } from "../core/store/periods.ts";
import { toPico, picoToUsd } from "../core/money/money.ts";

const LIMITED = testKey("limited");
const SPENDER = testKey("spender");
const BUDGET = "0.01";

describe("two replicas on one redis-server", () => {
  let redis: TestRedis;
  let fake: FakeOpenAI;
  let a: ChildGateway;
  let b: ChildGateway;
  let store: RedisStore;
  let configFile: string;
  const prefix = `mg-${ulid()}:`;

  beforeAll(async () => {
    redis = await startRedis();
    fake = await startFakeOpenAI({ chunkDelayMs: 20 });
    const dir = mkdtempSync(join(tmpdir(), "mg-replicas-"));
    configFile = join(dir, "gateway.yaml");
    const config = policyConfig(fake.baseUrl, { store: { kind: "redis", url: redis.url, prefix } }) as any;
    config.projects.limited = { keys: [keyEntry("lk", LIMITED, { rate_limits: { rpm: 5 } })] };
    config.projects.spender = { keys: [keyEntry("sk", SPENDER)], budget: { usd: BUDGET, period: "total" } };
    writeFileSync(configFile, YAML.stringify(config));
    [a, b] = await Promise.all([startChildGateway(configFile), startChildGateway(configFile)]);
    store = await RedisStore.connect(redis.url, prefix);
  });
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await store?.close();
    await fake?.close();
    await redis?.stop();
  });

  it("an RPM limit of 5 lets exactly 5 requests through across both replicas", async () => {
    const rs = await Promise.all(Array.from({ length: 14 }, (_, i) => postJson(`${(i % 2 ? a : b).baseURL}/chat/completions`, chat(), auth(LIMITED))));
    expect(rs.filter((r) => r.status === 200)).toHaveLength(5);
    const refused = rs.filter((r) => r.status === 429);
    expect(refused).toHaveLength(9);
    for (const r of refused) {
      expect(r.json.error.code).toBe("RATE_LIMITED");
      expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(r.headers.get("x-ratelimit-remaining-requests")).toBe("0");
    }
  });

  it("50 concurrent requests against a nearly exhausted budget never overspend it", async () => {
    // A worst case per request (max_tokens 20): body chars at $0.000001 + 20 tokens at $0.000002 — about $0.00016.
    const body = chat();
    const worst = new Big(JSON.stringify(body).length).times("0.000001").plus(new Big(20).times("0.000002"));
    // Leave room for three reservations in flight.
    const spent = new Big(BUDGET).minus(worst.times(3.5));
    const p = periodOf("total", Date.now());
    await store.record({
      generationId: `gen_seed_${ulid()}`, requestId: "seed", ts: Date.now(), keyId: "sk", project: "spender", endpoint: "chat",
      model: "openai/gpt-4o-mini", provider: "up", attempts: 1, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0,
      reasoningTokens: 0, images: 0, videoSeconds: 0, searchUnits: 0, costUsd: spent.toFixed(), costPico: toPico(spent), latencyMs: 0,
      ttftMs: null, status: 200, outcome: "ok", sandbox: false, estimated: false,
    });
    const rs = await Promise.all(Array.from({ length: 50 }, (_, i) => postJson(`${(i % 2 ? a : b).baseURL}/chat/completions`, body, auth(SPENDER))));
    const ok = rs.filter((r) => r.status === 200).length;
    const refused = rs.filter((r) => r.status === 402);
    expect(ok).toBeGreaterThanOrEqual(3);
    expect(refused.length).toBeGreaterThan(0);
    expect(ok + refused.length).toBe(50);
    expect(refused[0]!.json.error.code).toBe("BUDGET_EXCEEDED");

    const ledger = await store.ledger({ project: "spender" });
    expect(ledger).toHaveLength(ok + 1);
    const total = ledger.reduce((s, e) => s.plus(e.costUsd), new Big(0));
    const counted = await store.spent("spender", p.key, p.start);
    expect(picoToUsd(counted)).toBe(total.toFixed());
    // Reservations bound every request's real cost, so the cap holds outright (overspend <= reservations in flight).
    expect(total.lte(BUDGET)).toBe(true);

    // `model-gateway usage` reads the same ledger from Redis.
    const { stdout } = await promisify(execFile)(process.execPath, ["bin/model-gateway.mjs", "usage", "--config", configFile, "--project", "spender", "--json"], {
      cwd: fileURLToPath(new URL("..", import.meta.url)),
    });
    const rows = JSON.parse(stdout);
    expect(rows.reduce((n: number, r: any) => n + r.requests, 0)).toBe(ledger.length);
    expect(rows.reduce((s: Big, r: any) => s.plus(r.costUsd), new Big(0)).eq(total)).toBe(true);
  });

  it("an idempotent request sent to both replicas at once reaches the upstream once", async () => {
    const key = ulid();
    const before = fake.requests.length;
    const body = chat("openai/gpt-4o-mini", { stream: true });
    const send = (g: ChildGateway) => fetch(`${g.baseURL}/chat/completions`, {
      method: "POST", headers: { "content-type": "application/json", ...auth(KEY, { "idempotency-key": key }) }, body: JSON.stringify(body),
    }).then(async (r) => ({ status: r.status, replayed: r.headers.get("idempotent-replayed"), text: await r.text() }));
    const [ra, rb] = await Promise.all([send(a), send(b)]);
    expect(fake.requests.length - before).toBe(1);
    expect([ra.status, rb.status]).toEqual([200, 200]);
    expect([ra.replayed, rb.replayed].filter((x) => x === "true")).toHaveLength(1);
    expect(ra.text).toBe(rb.text);
  });
});
