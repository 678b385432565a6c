// A retry whose first attempt's process died (kill -9 of a worker) found the key claimed by an owner nobody renews:
// it waited, sending nothing, until the claim's 15-minute lease ended. A claim says how often its owner renews it, so
// a duplicate tells a dead owner's claim (silent for three renewal periods and a minute: 409 with Retry-After, which
// the SDKs retry) from a live one, which it waits for however long its request runs: a stream longer than
// server.upstream_timeout_ms (the first fix's fixed wait, which answered a legitimate duplicate 409) is replayed.
// A live owner's claim silent for a while (its renewals failed during a store outage) is still waited for; a claim
// without renewal info (an older release's, which may have died) gets the 409 after server.upstream_timeout_ms; and
// a claim held in this process (memory, SQLite) is its live owner's, however long since it was renewed.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createHash, randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { startTestGateway, postJson, type TestGateway } from "../../test/helpers/gateway.ts";
import { startFakeOpenAI, type FakeOpenAI } from "../../test/upstreams/openai.ts";
import { auth, chat, policyConfig } from "../../test/helpers/policy-config.ts";
import { startRedis, type TestRedis } from "../../test/helpers/redis.ts";
import { idempotencyScope } from "../../core/http/idempotency-key.ts";
import { canonicalJson } from "../../core/http/canonical-json.ts";
import { LEASE_MS, RENEW_EVERY_MS } from "./claim-lease.ts";

const TWENTY_WORDS = Array.from({ length: 20 }, (_, i) => `w${i}`).join(" ");
const STREAM = { ...chat("openai/gpt-4o-mini", { max_tokens: 100 }), stream: true };

/** The scope and request hash the plugin claims a chat request's key under (acme's live key). */
function claimOf(key: string, body: unknown) {
  const scope = idempotencyScope("acme", "chat", key, false);
  const hash = createHash("sha256").update(canonicalJson({ protocol: "openai", action: null, body })).digest("base64url");
  return { scope, hash };
}

interface Setup {
  fake: FakeOpenAI;
  gw: TestGateway;
  redis?: TestRedis;
  prefix: string;
}

function useGateway(kind: string): Setup {
  const s = { prefix: `oc-${randomUUID()}:` } as Setup;
  beforeAll(async () => {
    s.fake = await startFakeOpenAI({ text: TWENTY_WORDS });
    if (kind === "redis") s.redis = await startRedis();
    const store = kind === "memory" ? { kind: "memory" } : kind === "sqlite" ? { kind: "sqlite", path: "./data/g.db" } : { kind: "redis", url: s.redis!.url, prefix: s.prefix };
    s.gw = await startTestGateway({ ...policyConfig(s.fake.baseUrl, { store }), server: { upstream_timeout_ms: 300 } });
  });
  afterAll(async () => {
    await s.gw?.close();
    await s.fake?.close();
    await s.redis?.stop();
  });
  return s;
}

/** Runs the first request (a stream of ~2 s, each gap within the 300 ms timeout); `meanwhile` once it has reached the upstream. */
async function duplicateOfRunningStream(s: Setup, key: string, meanwhile: () => Promise<void> | void) {
  s.fake.pace = (b) => (b.stream ? 100 : undefined);
  try {
    const headers = auth(undefined, { "idempotency-key": key });
    const before = s.fake.requests.length;
    const first = postJson(`${s.gw.baseURL}/chat/completions`, STREAM, headers);
    await vi.waitFor(() => expect(s.fake.requests.length).toBe(before + 1), { timeout: 5_000, interval: 20 });
    await meanwhile();
    const second = await postJson(`${s.gw.baseURL}/chat/completions`, STREAM, headers);
    return { first: await first, second, upstreamCalls: s.fake.requests.length - before };
  } finally {
    s.fake.pace = undefined;
  }
}

function expectReplayed(r: Awaited<ReturnType<typeof duplicateOfRunningStream>>) {
  expect(r.first.status).toBe(200);
  expect(r.second.status, r.second.text).toBe(200);
  expect(r.second.headers.get("idempotent-replayed")).toBe("true");
  expect(r.second.text).toBe(r.first.text);
  expect(r.upstreamCalls).toBe(1); // one upstream call, one bill
}

describe.each(["memory", "sqlite", "redis"])("idempotency claims' owners on a %s store", (kind) => {
  const s = useGateway(kind);

  it("replays to a duplicate the stream still running longer than server.upstream_timeout_ms, instead of a 409", async () => {
    expectReplayed(await duplicateOfRunningStream(s, `long-${randomUUID()}`, () => {}));
  });
});

describe.each(["memory", "sqlite"])("a claim held in this process, on a %s store", (kind) => {
  const s = useGateway(kind);

  it("is waited for and replayed even when the waiter's clock has jumped minutes past the last renewal (a paused process, a long GC)", async () => {
    const realNow = Date.now.bind(Date);
    try {
      const r = await duplicateOfRunningStream(s, `paused-${randomUUID()}`, () => {
        vi.spyOn(Date, "now").mockImplementation(() => realNow() + 3 * 60_000);
      });
      expectReplayed(r);
    } finally {
      vi.restoreAllMocks();
    }
  });
});

describe("claims on a Redis store shared by replicas", () => {
  const s = useGateway("redis");
  const redisKey = (scope: string) => `${s.prefix}idem:${scope}`;
  async function withRedis<T>(f: (r: Redis) => Promise<T>): Promise<T> {
    const r = new Redis(s.redis!.url);
    try {
      return await f(r);
    } finally {
      r.disconnect();
    }
  }

  it("answers a retry of a dead owner's claim 409 with Retry-After, telling it to retry later (not to use a new key), and calls no upstream", async () => {
    const key = `crashed-${randomUUID()}`;
    const body = chat();
    const { scope, hash } = claimOf(key, body);
    // The claim a dead process wrote, as the plugin writes it, last renewed 70 s ago.
    expect(await s.gw.gateway.store.idempotencyBegin(scope, hash, "pid-gone:1", LEASE_MS, Date.now(), RENEW_EVERY_MS)).toEqual({ state: "new" });
    await withRedis((r) => r.pexpire(redisKey(scope), LEASE_MS - 70_000));

    const before = s.fake.requests.length;
    const r = await postJson(`${s.gw.baseURL}/chat/completions`, body, auth(undefined, { "idempotency-key": key }));
    expect(r.status, r.text).toBe(409);
    expect(r.json.error).toMatchObject({ code: "CONFLICT", param: "Idempotency-Key", details: { reason: "key_in_progress" } });
    expect(r.json.error.message).toContain("Retry later with the same key");
    expect(r.json.error.message).not.toMatch(/new key/);
    expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(s.fake.requests.length).toBe(before); // not run a second time: the first may yet finish and be replayed
  });

  it("answers 409 after server.upstream_timeout_ms, not after the 15-minute lease, for a claim an older release left without renewal info", async () => {
    const key = `old-release-${randomUUID()}`;
    const body = chat();
    const { scope, hash } = claimOf(key, body);
    // What a replica of the previous release writes (no renewal period): it may have died since.
    expect(await s.gw.gateway.store.idempotencyBegin(scope, hash, "old-replica:1", LEASE_MS, Date.now())).toEqual({ state: "new" });

    const before = s.fake.requests.length;
    const signal = AbortSignal.timeout(10_000); // before the fix: no answer for 15 minutes
    const res = await fetch(`${s.gw.baseURL}/chat/completions`, { method: "POST", headers: { "content-type": "application/json", ...auth(undefined, { "idempotency-key": key }) }, body: JSON.stringify(body), signal });
    const json = (await res.json()) as any;
    expect(res.status).toBe(409);
    expect(json.error).toMatchObject({ code: "CONFLICT", details: { reason: "key_in_progress", waited_ms: 300 } });
    expect(json.error.message).not.toMatch(/new key/);
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(s.fake.requests.length).toBe(before);
  }, 15_000);

  it("waits for and replays a live owner's claim left unrenewed for 35 s by a store outage (its renewals failed), instead of a 409", async () => {
    const key = `outage-${randomUUID()}`;
    const { scope } = claimOf(key, STREAM);
    const r = await duplicateOfRunningStream(s, key, () =>
      // The claim as a 25 s store pause leaves it: last renewed 35 s ago (the renewals during the pause failed).
      withRedis((redis) => redis.pexpire(redisKey(scope), LEASE_MS - 35_000)).then(() => undefined),
    );
    expectReplayed(r);
  });
});
