// An answer larger than its limit (idempotency.max_record_bytes for a JSON answer, max_stream_record_bytes for a
// stream) is sent whole but not kept: the stored record stays small and a retry with the same key gets a 422 naming
// the limit, without reaching the provider (or billing) a second time.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ulid } from "ulid";
import Database from "better-sqlite3";
import { startTestGateway, postJson, type TestGateway } from "../../test/helpers/gateway.ts";
import { startFakeOpenAI, type FakeOpenAI } from "../../test/upstreams/openai.ts";
import { auth, chat, policyConfig } from "../../test/helpers/policy-config.ts";

const LIMIT = 4096;
/** 15 KB of answer in ten pieces (under the request's max_tokens): well over the limit. */
const BIG = Array.from({ length: 10 }, () => " lorem ipsum".repeat(125));
/**
 * Answers whose characters are under the limit but whose UTF-8 bytes, as stored, are over it (a CJK character is 3
 * bytes): a JSON one of 1500 characters (~4.8 KB stored) and a stream of 1000 (~5 KB of events).
 */
const CJK_JSON = Array.from({ length: 10 }, () => "漢".repeat(150));
const CJK_STREAM = Array.from({ length: 5 }, () => "漢".repeat(200));

describe("idempotency: an answer over its record limit", () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "idem-too-large-"));
    fake = await startFakeOpenAI();
    fake.pace = () => "burst";
    fake.piecesFor = (body) => {
      const asked = JSON.stringify(body.messages);
      return asked.includes("big") ? BIG : asked.includes("in kanji") ? (body.stream ? CJK_STREAM : CJK_JSON) : undefined;
    };
    const config = { ...policyConfig(fake.baseUrl, { store: { kind: "sqlite", path: join(dir, "gw.db") } }), idempotency: { max_record_bytes: LIMIT, max_stream_record_bytes: LIMIT } };
    gw = await startTestGateway(config);
  });
  afterAll(async () => {
    await gw?.close();
    await fake?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const url = () => `${gw.baseURL}/chat/completions`;
  const calls = () => fake.requests.length;
  const big = (extra: Record<string, unknown> = {}) => ({ ...chat(), messages: [{ role: "user", content: "say something big" }], ...extra });
  /** The largest idempotency row in the store's file, as the audit measured it. */
  const largestRow = () => {
    const db = new Database(join(dir, "gw.db"), { readonly: true });
    try {
      return (db.prepare("SELECT max(length(response)) AS n FROM idempotency").get() as { n: number }).n;
    } finally {
      db.close();
    }
  };

  function expectTooLarge(r: { status: number; json: any }, firstRequestId: string | null, setting = "idempotency.max_record_bytes") {
    expect(r.status).toBe(422);
    expect(r.json.error.code).toBe("INVALID_REQUEST");
    expect(r.json.error.message).toContain(`${setting} (${LIMIT} bytes)`);
    expect(r.json.error.details).toMatchObject({ field: "Idempotency-Key", reason: "answer_too_large_to_replay", limit_bytes: LIMIT, setting, original_request_id: firstRequestId });
  }

  it("a stream is sent whole, kept as a small record, and a retry gets 422 without calling the provider", async () => {
    const key = ulid();
    const headers = { "content-type": "application/json", ...auth(undefined, { "idempotency-key": key }) };
    const first = await fetch(url(), { method: "POST", headers, body: JSON.stringify(big({ stream: true })) });
    const text = await first.text();
    expect(first.status).toBe(200);
    expect(text.trim().endsWith("data: [DONE]")).toBe(true);
    expect(text.length).toBeGreaterThan(3 * LIMIT); // the client got all of it
    expect(largestRow()).toBeLessThan(1024);

    const before = calls();
    const retry = await postJson(url(), big({ stream: true }), auth(undefined, { "idempotency-key": key }));
    expectTooLarge(retry, first.headers.get("x-request-id"), "idempotency.max_stream_record_bytes");
    expect(calls()).toBe(before);
  });

  it("a JSON answer the same way", async () => {
    const key = ulid();
    const first = await postJson(url(), big(), auth(undefined, { "idempotency-key": key }));
    expect(first.status).toBe(200);
    expect(first.json.choices[0].message.content.length).toBeGreaterThan(3 * LIMIT);
    expect(largestRow()).toBeLessThan(1024);
    const before = calls();
    const retry = await postJson(url(), big(), auth(undefined, { "idempotency-key": key }));
    expectTooLarge(retry, first.headers.get("x-request-id"));
    expect(calls()).toBe(before);
  });

  it("the limit counts UTF-8 bytes as stored, not characters: CJK answers under it in characters are over it", async () => {
    const kanji = (extra: Record<string, unknown> = {}) => ({ ...chat(), messages: [{ role: "user", content: "answer in kanji" }], ...extra });
    for (const [body, setting] of [[kanji(), "idempotency.max_record_bytes"], [kanji({ stream: true }), "idempotency.max_stream_record_bytes"]] as const) {
      const key = ulid();
      const first = await fetch(url(), { method: "POST", headers: { "content-type": "application/json", ...auth(undefined, { "idempotency-key": key }) }, body: JSON.stringify(body) });
      const text = await first.text();
      expect(first.status).toBe(200);
      expect(text.length).toBeLessThan(LIMIT); // in characters the whole answer is under the limit...
      expect(Buffer.byteLength(text)).toBeGreaterThan(LIMIT); // ...in bytes it is not
      expect(largestRow()).toBeLessThan(1024); // no row past the limit
      const before = calls();
      const retry = await postJson(url(), body, auth(undefined, { "idempotency-key": key }));
      expectTooLarge(retry, first.headers.get("x-request-id"), setting);
      expect(calls()).toBe(before);
    }
  });

  it("an answer under the limit is still replayed", async () => {
    const key = ulid();
    const first = await postJson(url(), chat(), auth(undefined, { "idempotency-key": key }));
    const before = calls();
    const again = await postJson(url(), chat(), auth(undefined, { "idempotency-key": key }));
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.json).toEqual(first.json);
    expect(calls()).toBe(before);
  });
});
