// Durability on SQLite: traffic, kill -9 mid-traffic, restart on the same file. Every request that got a complete
// 2xx is in the ledger exactly once, spend (what the budget sees) equals the ledger, idempotent replays still replay.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import YAML from "yaml";
import Big from "big.js";
import { ulid } from "ulid";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { startChildGateway, type ChildGateway } from "./helpers/child-gateway.ts";
import { auth, chat, policyConfig } from "./helpers/policy-config.ts";
import { SqliteStore } from "../core/store/sqlite.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

describe("SQLite store across kill -9", () => {
  let fake: FakeOpenAI;
  let dir: string;
  let configFile: string;
  let gw: ChildGateway | undefined;
  beforeAll(async () => {
    fake = await startFakeOpenAI({ chunkDelayMs: 15 });
    dir = mkdtempSync(join(tmpdir(), "mg-restart-"));
    configFile = join(dir, "gateway.yaml");
    writeFileSync(configFile, YAML.stringify(policyConfig(fake.baseUrl, {
      store: { kind: "sqlite", path: "./state/gateway.db" },
      acme: { budget: { usd: "5", period: "month" } },
    })));
  });
  afterAll(async () => {
    await gw?.stop();
    await fake?.close();
  });

  async function send(base: string, body: unknown, headers: Record<string, string>) {
    const requestId = `req_${ulid()}`;
    try {
      const res = await fetch(`${base}/chat/completions`, { method: "POST", headers: { "content-type": "application/json", "x-request-id": requestId, ...auth(undefined, headers) }, body: JSON.stringify(body) });
      const text = await res.text();
      const complete = (body as any).stream ? text.trimEnd().endsWith("data: [DONE]") : true;
      return { requestId, status: res.status, text, complete, replayed: res.headers.get("idempotent-replayed") === "true" };
    } catch {
      return { requestId, status: 0, text: "", complete: false, replayed: false };
    }
  }

  it("keeps every answered request, the spend and the idempotency records", async () => {
    gw = await startChildGateway(configFile);
    const jsonKey = ulid();
    const streamKey = ulid();
    const keyed = await send(gw.baseURL, chat(), { "idempotency-key": jsonKey });
    const keyedStream = await send(gw.baseURL, chat("openai/gpt-4o-mini", { stream: true }), { "idempotency-key": streamKey });
    expect([keyed.status, keyedStream.status]).toEqual([200, 200]);

    // Steady traffic, then more in flight (slow streams) when the process is killed.
    const done = await Promise.all(Array.from({ length: 20 }, (_, i) => send(gw!.baseURL, chat("openai/gpt-4o-mini", { stream: i % 2 === 0 }), {})));
    const inFlight = Array.from({ length: 20 }, (_, i) => send(gw!.baseURL, chat("openai/gpt-4o-mini", { stream: i % 2 === 0, max_tokens: 50 }), {}));
    await new Promise((r) => setTimeout(r, 60));
    await gw.kill9();
    const cut = await Promise.all(inFlight);

    expect(cut.some((r) => !r.complete)).toBe(true); // the kill really interrupted traffic
    const answered = [keyed, keyedStream, ...done, ...cut].filter((r) => r.status === 200 && r.complete);
    expect(answered.length).toBeGreaterThanOrEqual(22);

    gw = await startChildGateway(configFile);
    // Replays still replay, from the durable record, without a new upstream call.
    const upstreamBefore = fake.requests.length;
    const again = await send(gw.baseURL, chat(), { "idempotency-key": jsonKey });
    const againStream = await send(gw.baseURL, chat("openai/gpt-4o-mini", { stream: true }), { "idempotency-key": streamKey });
    expect(fake.requests.length).toBe(upstreamBefore);
    expect(again.replayed && againStream.replayed).toBe(true);
    expect(again.text).toBe(keyed.text);
    expect(againStream.text).toBe(keyedStream.text);

    // The spend the budget sees after the restart (in a 402's details) equals the ledger.
    const refused = await send(gw.baseURL, chat("openai/gpt-4o-mini", { max_tokens: 10_000_000 }), {});
    expect(refused.status).toBe(402);
    const spentUsd = JSON.parse(refused.text).error.details.spent_usd;

    await gw.stop();
    gw = undefined;
    const store = new SqliteStore(join(dir, "state", "gateway.db"));
    try {
      const ledger = await store.ledger({ project: "acme" });
      for (const r of answered) expect(ledger.filter((e) => e.requestId === r.requestId), r.requestId).toHaveLength(1);
      expect(new Set(ledger.map((e) => e.generationId)).size).toBe(ledger.length);
      expect(ledger.every((e) => e.requestId !== again.requestId && e.requestId !== againStream.requestId)).toBe(true);
      const sum = ledger.reduce((s, e) => s.plus(e.costUsd), new Big(0));
      expect(new Big(spentUsd).eq(sum)).toBe(true);
      expect(sum.gt(0)).toBe(true);

      // The usage command reads the same ledger.
      const { stdout } = await promisify(execFile)(process.execPath, ["bin/model-gateway.mjs", "usage", "--config", configFile, "--project", "acme", "--json"], { cwd: ROOT });
      const rows = JSON.parse(stdout);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ project: "acme", model: "openai/gpt-4o-mini", requests: ledger.length });
      expect(new Big(rows[0].costUsd).eq(sum)).toBe(true);
    } finally {
      await store.close();
    }
  });
});
