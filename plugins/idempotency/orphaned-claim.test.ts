// A retry whose first attempt's process died (kill -9 of a worker) found the key claimed by an owner nobody renews:
// it waited, sending nothing, until the claim's 15-minute lease ended. A claim says how often its owner renews it, so
// a duplicate tells a dead owner's claim (silent for two renewal periods: 409 with Retry-After, which the SDKs retry)
// from a live one, which it waits for however long its request runs: a stream longer than server.upstream_timeout_ms
// (the first fix's fixed wait, which answered a legitimate duplicate 409) is replayed.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createHash, randomUUID } from "node:crypto";
import { startTestGateway, postJson, type TestGateway } from "../../test/helpers/gateway.ts";
import { startFakeOpenAI, type FakeOpenAI } from "../../test/upstreams/openai.ts";
import { auth, chat, policyConfig } from "../../test/helpers/policy-config.ts";
import { startRedis, type TestRedis } from "../../test/helpers/redis.ts";
import { idempotencyScope } from "../../core/http/idempotency-key.ts";
import { canonicalJson } from "../../core/http/canonical-json.ts";
import { LEASE_MS } from "./claim-lease.ts";

const TWENTY_WORDS = Array.from({ length: 20 }, (_, i) => `w${i}`).join(" ");

describe.each(["memory", "sqlite", "redis"])("idempotency claims' owners on a %s store", (kind) => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  let redis: TestRedis | undefined;
  beforeAll(async () => {
    fake = await startFakeOpenAI({ text: TWENTY_WORDS });
    if (kind === "redis") redis = await startRedis();
    const store = kind === "memory" ? { kind: "memory" } : kind === "sqlite" ? { kind: "sqlite", path: "./data/g.db" } : { kind: "redis", url: redis!.url, prefix: `oc-${randomUUID()}:` };
    gw = await startTestGateway({ ...policyConfig(fake.baseUrl, { store }), server: { upstream_timeout_ms: 300 } });
  });
  afterAll(async () => {
    await gw?.close();
    await fake?.close();
    await redis?.stop();
  });

  it("answers a retry of a dead owner's claim 409 with Retry-After instead of holding it for the claim's lease, and calls no upstream", async () => {
    const key = `crashed-${randomUUID()}`;
    const body = chat();
    // The claim the dead process wrote, as the plugin writes it (same scope and request hash), renewed by no one
    // although its owner said it would every 100 ms.
    const scope = idempotencyScope("acme", "chat", key, false);
    const hash = createHash("sha256").update(canonicalJson({ protocol: "openai", action: null, body })).digest("base64url");
    expect(await gw.gateway.store.idempotencyBegin(scope, hash, "pid-gone:1", LEASE_MS, Date.now(), 100)).toEqual({ state: "new" });

    const before = fake.requests.length;
    const r = await postJson(`${gw.baseURL}/chat/completions`, body, auth(undefined, { "idempotency-key": key }));
    expect(r.status, r.text).toBe(409);
    expect(r.json.error).toMatchObject({ code: "CONFLICT", param: "Idempotency-Key", details: { reason: "key_in_progress" } });
    expect(r.json.error.message).toContain("still in progress");
    expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(fake.requests.length).toBe(before); // not run a second time: the first may yet finish and be replayed
  });

  it("replays to a duplicate the stream still running longer than server.upstream_timeout_ms, instead of a 409", async () => {
    fake.pace = (b) => (b.stream ? 100 : undefined); // 20 chunks 100 ms apart: ~2 s, each gap within the 300 ms timeout
    try {
      const headers = auth(undefined, { "idempotency-key": `long-${randomUUID()}` });
      const body = { ...chat("openai/gpt-4o-mini", { max_tokens: 100 }), stream: true };
      const before = fake.requests.length;
      const first = postJson(`${gw.baseURL}/chat/completions`, body, headers);
      await vi.waitFor(() => expect(fake.requests.length).toBe(before + 1), { timeout: 5_000, interval: 20 });
      const second = await postJson(`${gw.baseURL}/chat/completions`, body, headers);
      const a = await first;
      expect(a.status).toBe(200);
      expect(second.status, second.text).toBe(200);
      expect(second.headers.get("idempotent-replayed")).toBe("true");
      expect(second.text).toBe(a.text);
      expect(fake.requests.length).toBe(before + 1); // one upstream call, one bill
    } finally {
      fake.pace = undefined;
    }
  });
});
