// A retry whose first attempt's process died (kill -9 of a worker) found the key claimed by an owner nobody renews:
// it waited, sending nothing, until the claim's 15-minute lease ended. A duplicate now waits at most
// server.upstream_timeout_ms for the first request and then gets 409 with Retry-After, which the SDKs retry.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHash, randomUUID } from "node:crypto";
import { startTestGateway, postJson, type TestGateway } from "../../test/helpers/gateway.ts";
import { startFakeOpenAI, type FakeOpenAI } from "../../test/upstreams/openai.ts";
import { auth, chat, policyConfig } from "../../test/helpers/policy-config.ts";
import { idempotencyScope } from "../../core/http/idempotency-key.ts";
import { canonicalJson } from "../../core/http/canonical-json.ts";
import { LEASE_MS } from "./claim-lease.ts";

describe.each(["memory", "sqlite"])("a key claimed by a process that is gone, on a %s store", (kind) => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  beforeAll(async () => {
    fake = await startFakeOpenAI();
    const store = kind === "memory" ? { kind: "memory" } : { kind: "sqlite", path: "./data/g.db" };
    gw = await startTestGateway({ ...policyConfig(fake.baseUrl, { store }), server: { upstream_timeout_ms: 300 } });
  });
  afterAll(async () => {
    await gw?.close();
    await fake?.close();
  });

  it("answers a retry 409 with Retry-After instead of holding it for the claim's lease, and calls no upstream", async () => {
    const key = `crashed-${randomUUID()}`;
    const body = chat();
    // The claim the dead process wrote, as the plugin writes it (same scope and request hash), renewed by no one.
    const scope = idempotencyScope("acme", "chat", key, false);
    const hash = createHash("sha256").update(canonicalJson({ protocol: "openai", action: null, body })).digest("base64url");
    expect(await gw.gateway.store.idempotencyBegin(scope, hash, "pid-gone:1", LEASE_MS, Date.now())).toEqual({ state: "new" });

    const before = fake.requests.length;
    const r = await postJson(`${gw.baseURL}/chat/completions`, body, auth(undefined, { "idempotency-key": key }));
    expect(r.status, r.text).toBe(409);
    expect(r.json.error).toMatchObject({ code: "CONFLICT", param: "Idempotency-Key", details: { reason: "key_in_progress" } });
    expect(r.json.error.message).toContain("still in progress");
    expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(fake.requests.length).toBe(before); // not run a second time: the first may yet finish and be replayed
  });
});
