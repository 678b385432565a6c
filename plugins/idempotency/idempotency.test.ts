import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHash, randomUUID } from "node:crypto";
import { ulid } from "ulid";
import { startTestGateway, postJson, type TestGateway } from "../../test/helpers/gateway.ts";
import { idempotencyScope } from "../../core/http/idempotency-key.ts";
import { startFakeOpenAI, type FakeOpenAI } from "../../test/upstreams/openai.ts";
import { auth, chat, OTHER, SANDBOX, policyConfig } from "../../test/helpers/policy-config.ts";

describe("idempotency plugin", () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  beforeAll(async () => {
    fake = await startFakeOpenAI({ chunkDelayMs: 5 });
    gw = await startTestGateway(policyConfig(fake.baseUrl, { other: { allow_models: ["*"], rate_limits: { tpm: 3000 } } }));
  });
  afterAll(async () => {
    await gw?.close();
    await fake?.close();
  });
  const url = () => `${gw.baseURL}/chat/completions`;
  const calls = () => fake.requests.length;

  it("takes a free-form Idempotency-Key, exactly as sent, and refuses one with a space or over 255 characters", async () => {
    const key = `order-${randomUUID().slice(0, 8)}/Retry_1`;
    const first = await postJson(url(), chat(), auth(undefined, { "idempotency-key": key }));
    expect(first.status, first.text).toBe(200);
    const before = calls();
    const again = await postJson(url(), chat(), auth(undefined, { "idempotency-key": key }));
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.json).toEqual(first.json);
    // Not a ULID or UUID: its case is part of the key.
    const other = await postJson(url(), chat(), auth(undefined, { "idempotency-key": key.toUpperCase() }));
    expect(other.headers.get("idempotent-replayed")).toBeNull();
    expect(calls()).toBe(before + 1);

    for (const bad of ["my key", "k".repeat(256)]) {
      const r = await postJson(url(), chat(), auth(undefined, { "idempotency-key": bad }));
      expect(r.status).toBe(400);
      expect(r.json.error).toMatchObject({ code: "INVALID_REQUEST", param: "Idempotency-Key" });
      expect(r.json.error.message).toContain("1 to 255 visible ASCII characters");
    }
  });

  it("refuses an x-mg-idempotency-key that is neither a ULID nor a UUID with a 400 naming the header", async () => {
    const r = await postJson(url(), chat(), auth(undefined, { "x-mg-idempotency-key": "nope" }));
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({ code: "INVALID_REQUEST", param: "x-mg-idempotency-key" });
    expect(r.json.error.message).toContain("must be a ULID or a UUID");
  });

  it("replays the original JSON response without calling the upstream or billing again", async () => {
    const key = ulid();
    const first = await postJson(url(), chat(), auth(undefined, { "idempotency-key": key }));
    const before = calls();
    const again = await postJson(url(), chat(), auth(undefined, { "idempotency-key": key }));
    expect(calls()).toBe(before);
    expect(again.status).toBe(200);
    expect(again.json).toEqual(first.json);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const ledger = await gw.gateway.store.ledger({});
    expect(ledger.filter((e) => e.generationId === first.json.providerMetadata.gateway.generationId)).toHaveLength(1);
    expect(ledger.filter((e) => e.requestId === again.headers.get("x-request-id"))).toHaveLength(0);
    // The replay names the original's generation: the one in its body and the ledger (it writes none of its own).
    const generationId = first.json.providerMetadata.gateway.generationId;
    expect(first.headers.get("x-mg-generation-id")).toBe(generationId);
    expect(again.headers.get("x-mg-generation-id")).toBe(generationId);
    expect(again.headers.get("x-mg-original-request-id")).toBe(first.headers.get("x-request-id"));
    // x-mg-idempotency-key names the same key space.
    const third = await postJson(url(), chat(), auth(undefined, { "x-mg-idempotency-key": key }));
    expect(third.json).toEqual(first.json);
  });

  it("replays a whole event stream", async () => {
    const key = randomUUID();
    const body = chat("openai/gpt-4o-mini", { stream: true });
    const send = () => fetch(url(), { method: "POST", headers: { "content-type": "application/json", ...auth(undefined, { "idempotency-key": key }) }, body: JSON.stringify(body) });
    const a = await send();
    const textA = await a.text();
    const before = calls();
    const b = await send();
    const textB = await b.text();
    expect(calls()).toBe(before);
    expect(b.headers.get("content-type")).toContain("text/event-stream");
    expect(b.headers.get("idempotent-replayed")).toBe("true");
    expect(textB).toBe(textA);
    expect(textB.trim().endsWith("data: [DONE]")).toBe(true);
    expect(b.headers.get("x-mg-generation-id")).toBe(a.headers.get("x-mg-generation-id"));
    const ledger = await gw.gateway.store.ledger({});
    expect(ledger.filter((e) => e.generationId === b.headers.get("x-mg-generation-id"))).toHaveLength(1);
  });

  it("a replay carries the original's x-mg-provider and x-mg-upstream-model, costs 0, and counts under provider=\"replay\"", async () => {
    const requests = async (provider: string) =>
      (await gw.gateway.metrics.registry.getSingleMetric("gateway_requests_total")!.get()).values.filter((v) => v.labels.provider === provider).reduce((n, v) => n + v.value, 0);
    for (const stream of [false, true]) {
      const key = ulid();
      const body = chat("openai/gpt-4o-mini", { stream });
      const send = () => fetch(url(), { method: "POST", headers: { "content-type": "application/json", ...auth(undefined, { "idempotency-key": key }) }, body: JSON.stringify(body) });
      const first = await send();
      await first.text();
      const [up, replays, none] = [await requests("up"), await requests("replay"), await requests("")];
      const again = await send();
      await again.text();
      expect(again.headers.get("idempotent-replayed")).toBe("true");
      expect(first.headers.get("x-mg-provider")).toBe("up");
      for (const h of ["x-mg-provider", "x-mg-resolved-provider", "x-mg-upstream-model"]) expect([h, again.headers.get(h)]).toEqual([h, first.headers.get(h)]);
      // The replay calls no provider and bills nothing: its own cost, as a cache hit states its hit price.
      expect(again.headers.get("x-mg-cost-usd")).toBe("0");
      // Counted as a replay, not as a request the provider served (nor under provider="").
      expect([await requests("up") - up, await requests("replay") - replays, await requests("") - none]).toEqual([0, 1, 0]);
    }
  });

  it("the same key with a different body is 422", async () => {
    const key = ulid();
    expect((await postJson(url(), chat(), auth(undefined, { "idempotency-key": key }))).status).toBe(200);
    const r = await postJson(url(), chat("openai/gpt-4o-mini", { max_tokens: 5 }), auth(undefined, { "idempotency-key": key }));
    expect(r.status).toBe(422);
    expect(r.json.error).toMatchObject({ code: "INVALID_REQUEST", param: "Idempotency-Key", details: { reason: "key_reused_with_different_body" } });
  });

  it("the same body with its members in another order is the same request: replayed, not 422", async () => {
    const key = ulid();
    const first = await postJson(url(), chat(), auth(undefined, { "idempotency-key": key }));
    const { model, messages, max_tokens } = chat();
    const reordered = await postJson(url(), { max_tokens, messages: messages.map((m) => ({ content: m.content, role: m.role })), model }, auth(undefined, { "idempotency-key": key }));
    expect(reordered.status, reordered.text).toBe(200);
    expect(reordered.headers.get("idempotent-replayed")).toBe("true");
    expect(reordered.json).toEqual(first.json);
  });

  it("one key on another API that reaches the same endpoint is a different request (422), not a replay in the first API's shape", async () => {
    // Gemini's embedContent and batchEmbedContents and OpenAI's embeddings are all the embeddings endpoint, with one
    // body once translated; each answers in its own shape. (The sandbox key: the fake upstream has no embeddings.)
    const key = ulid();
    const gemini = (method: string, body: unknown) => postJson(`${gw.url}/api/v1beta/models/openai/text-embedding-3-small:${method}`, body, { "x-goog-api-key": SANDBOX, "idempotency-key": key });
    const one = await gemini("embedContent", { content: { parts: [{ text: "hello" }] } });
    expect(one.status, one.text).toBe(200);
    expect(one.json.embedding.values.length).toBeGreaterThan(0);
    const batch = await gemini("batchEmbedContents", { requests: [{ model: "models/openai/text-embedding-3-small", content: { parts: [{ text: "hello" }] } }] });
    expect(batch.status, batch.text).toBe(422);
    expect(batch.json.error.message).toContain("different request");
    const openai = await postJson(`${gw.baseURL}/embeddings`, { model: "openai/text-embedding-3-small", input: "hello" }, auth(SANDBOX, { "idempotency-key": key }));
    expect(openai.status, openai.text).toBe(422);
    expect(openai.json.error).toMatchObject({ details: { reason: "key_reused_with_different_body" } });
    // The first API still replays its own answer.
    const again = await gemini("embedContent", { content: { parts: [{ text: "hello" }] } });
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.json).toEqual(one.json);
  });

  it("a record kept before the upgrade (hashed over the body's JSON text) is still replayed, and a different body still 422s", async () => {
    const key = ulid();
    const body = chat();
    // What the previous release stored for this key: its hash was sha256 of the body's JSON text.
    const legacy = createHash("sha256").update(JSON.stringify(body)).digest("base64url");
    const scope = idempotencyScope("acme", "chat", key.toLowerCase(), false);
    const store = gw.gateway.store;
    expect(await store.idempotencyBegin(scope, legacy, "old-release", 60_000, Date.now())).toEqual({ state: "new" });
    const kept = { id: "chatcmpl-before-upgrade", object: "chat.completion", choices: [] };
    await store.idempotencyComplete(scope, legacy, "old-release", { kind: "json", status: 200, headers: {}, body: kept }, 60_000, Date.now());
    const before = calls();
    const retried = await postJson(url(), body, auth(undefined, { "idempotency-key": key }));
    expect(retried.status, retried.text).toBe(200);
    expect(retried.headers.get("idempotent-replayed")).toBe("true");
    expect(retried.json).toEqual(kept);
    expect(calls()).toBe(before);
    const other = await postJson(url(), chat("openai/gpt-4o-mini", { max_tokens: 7 }), auth(undefined, { "idempotency-key": key }));
    expect(other.status).toBe(422);
  });

  it("concurrent duplicates reach the upstream once; the others wait and replay", async () => {
    const key = ulid();
    const before = calls();
    const rs = await Promise.all(Array.from({ length: 5 }, () => postJson(url(), chat(), auth(undefined, { "idempotency-key": key }))));
    expect(calls() - before).toBe(1);
    expect(rs.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(rs.filter((r) => r.headers.get("idempotent-replayed") === "true")).toHaveLength(4);
    expect(new Set(rs.map((r) => JSON.stringify(r.json))).size).toBe(1);
  });

  it("a failed request frees the key, so a retry runs for real", async () => {
    const key = ulid();
    fake.failures.push({ kind: "status", status: 400 });
    const failed = await postJson(url(), chat(), auth(undefined, { "idempotency-key": key }));
    expect(failed.status).toBeGreaterThanOrEqual(400);
    const before = calls();
    const retried = await postJson(url(), chat(), auth(undefined, { "idempotency-key": key }));
    expect(retried.status).toBe(200);
    expect(calls()).toBe(before + 1);
    expect(retried.headers.get("idempotent-replayed")).toBeNull();
  });

  it("a replay gives back its token-rate charge: replaying a large prompt neither lowers the window nor ends in 429", async () => {
    const key = ulid();
    const big = chat("openai/gpt-4o-mini", { messages: [{ role: "user", content: "lorem ipsum ".repeat(500) }] });
    const remaining = (r: { headers: Headers }) => Number(r.headers.get("x-ratelimit-remaining-tokens"));
    const first = await postJson(url(), big, auth(OTHER, { "idempotency-key": key }));
    expect(first.status, first.text).toBe(200);
    for (let i = 0; i < 3; i++) {
      const again = await postJson(url(), big, auth(OTHER, { "idempotency-key": key }));
      expect(again.status, again.text).toBe(200);
      expect(again.headers.get("idempotent-replayed")).toBe("true");
      expect(remaining(again)).toBeGreaterThanOrEqual(remaining(first) - 5);
    }
  });

  it("a replay names the original's generation id only where a ledger record has it: count_tokens has none", async () => {
    const key = ulid();
    const body = { model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "count me" }] };
    const count = () => postJson(`${gw.baseURL}/messages/count_tokens`, body, auth(undefined, { "idempotency-key": key, "anthropic-version": "2023-06-01" }));
    const first = await count();
    expect(first.status, first.text).toBe(200);
    const again = await count();
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(first.headers.get("x-mg-generation-id")).toBeNull();
    expect(again.headers.get("x-mg-generation-id")).toBeNull();
  });

  it("keys are scoped to the project", async () => {
    const key = ulid();
    await postJson(url(), chat(), auth(undefined, { "idempotency-key": key }));
    const before = calls();
    const other = await postJson(url(), chat(), auth(OTHER, { "idempotency-key": key }));
    expect(other.status).toBe(200);
    expect(calls()).toBe(before + 1);
  });

  it("a project's sandbox and live keys never get each other's answers", async () => {
    const provider = (r: { json: any }) => r.json.providerMetadata.gateway.resolvedProvider;
    // A live answer first: the same key and body from the project's sandbox key is the simulator's, not a replay.
    const key = ulid();
    const live = await postJson(url(), chat(), auth(undefined, { "idempotency-key": key }));
    expect(provider(live)).toBe("up");
    const sandbox = await postJson(url(), chat(), auth(SANDBOX, { "idempotency-key": key }));
    expect(sandbox.status, sandbox.text).toBe(200);
    expect(sandbox.headers.get("idempotent-replayed")).toBeNull();
    expect(provider(sandbox)).toBe("sim");
    // Each still replays its own.
    const sandboxAgain = await postJson(url(), chat(), auth(SANDBOX, { "idempotency-key": key }));
    expect(sandboxAgain.headers.get("idempotent-replayed")).toBe("true");
    expect(sandboxAgain.json).toEqual(sandbox.json);
    const liveAgain = await postJson(url(), chat(), auth(undefined, { "idempotency-key": key }));
    expect(liveAgain.json).toEqual(live.json);

    // A simulated answer planted first is not what a later live request with that key and body receives: the
    // provider is called and the request billed.
    const planted = ulid();
    const sim = await postJson(url(), chat(), auth(SANDBOX, { "idempotency-key": planted }));
    expect(provider(sim)).toBe("sim");
    const before = calls();
    const real = await postJson(url(), chat(), auth(undefined, { "idempotency-key": planted }));
    expect(real.status, real.text).toBe(200);
    expect(real.headers.get("idempotent-replayed")).toBeNull();
    expect(provider(real)).toBe("up");
    expect(calls()).toBe(before + 1);
    const billed = (await gw.gateway.store.ledger({})).filter((e) => e.generationId === real.json.providerMetadata.gateway.generationId);
    expect(billed).toHaveLength(1);
    expect(billed[0]).toMatchObject({ sandbox: false, provider: "up" });
    expect(billed[0]!.costPico).toBeGreaterThan(0n);
  });
});
