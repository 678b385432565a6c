// kill -9 under concurrent load on SQLite: 40 clients loop over streams and JSON requests through a child
// gateway; the process is killed mid-load and restarted on the same file. Every request whose response the client
// received completely is in the ledger exactly once; cut requests may or may not be; nothing is recorded twice.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import YAML from "yaml";
import { ulid } from "ulid";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { startChildGateway, type ChildGateway } from "./helpers/child-gateway.ts";
import { auth, chat, policyConfig } from "./helpers/policy-config.ts";
import { SqliteStore } from "../core/store/sqlite.ts";

const CLIENTS = 40;
/** Kill once this many requests were answered: the rest of the clients are mid-request at that moment. */
const KILL_AFTER = 150;

interface Sent {
  requestId: string;
  stream: boolean;
  /** The whole response arrived: a JSON 200, or a stream that ended with [DONE] and a complete body. */
  complete: boolean;
}

describe("SQLite ledger across kill -9 under concurrent streaming load", () => {
  let fake: FakeOpenAI;
  let dir: string;
  let configFile: string;
  let gw: ChildGateway | undefined;
  beforeAll(async () => {
    // A few ms between chunks: streams last long enough for many to be mid-flight at the kill.
    fake = await startFakeOpenAI({ chunkDelayMs: 4 });
    dir = mkdtempSync(join(tmpdir(), "mg-load-restart-"));
    configFile = join(dir, "gateway.yaml");
    writeFileSync(configFile, YAML.stringify(policyConfig(fake.baseUrl, {
      store: { kind: "sqlite", path: "./state/gateway.db" },
      acme: { budget: { usd: "1000", period: "month" } },
    })));
  });
  afterAll(async () => {
    await gw?.kill9();
    await fake?.close();
  });

  async function send(base: string, stream: boolean): Promise<Sent> {
    const requestId = `req_${ulid()}`;
    try {
      const res = await fetch(`${base}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-request-id": requestId, ...auth() },
        body: JSON.stringify(chat("openai/gpt-4o-mini", stream ? { stream: true, stream_options: { include_usage: true } } : {})),
      });
      const text = await res.text(); // rejects when the connection breaks before the body ended
      const complete = res.headers.get("x-request-id") === requestId && res.status === 200 && (stream ? text.trimEnd().endsWith("data: [DONE]") : JSON.parse(text).object === "chat.completion");
      return { requestId, stream, complete };
    } catch {
      return { requestId, stream, complete: false };
    }
  }

  it("keeps the record of every answered request, exactly once", async () => {
    gw = await startChildGateway(configFile);
    const sent: Sent[] = [];
    let answered = 0;
    let killing: Promise<void> | undefined;
    const client = async (i: number) => {
      for (let n = 0; !killing; n++) {
        const r = await send(gw!.baseURL, (i + n) % 3 !== 0); // two streams for each JSON request
        sent.push(r);
        if (r.complete && ++answered === KILL_AFTER) killing = gw!.kill9();
      }
    };
    await Promise.all(Array.from({ length: CLIENTS }, (_, i) => client(i)));
    await killing;

    const complete = sent.filter((r) => r.complete);
    expect(complete.length).toBeGreaterThanOrEqual(KILL_AFTER);
    expect(complete.some((r) => r.stream) && complete.some((r) => !r.stream)).toBe(true);
    expect(sent.some((r) => !r.complete)).toBe(true); // the kill really cut requests in flight

    // Restart on the same file (the WAL is recovered), serve, then stop cleanly.
    gw = await startChildGateway(configFile);
    const after = await send(gw.baseURL, true);
    expect(after.complete).toBe(true);
    await gw.stop();
    gw = undefined;

    const store = new SqliteStore(join(dir, "state", "gateway.db"));
    try {
      const ledger = await store.ledger({ project: "acme" });
      const byRequest = new Map<string, number>();
      for (const e of ledger) byRequest.set(e.requestId, (byRequest.get(e.requestId) ?? 0) + 1);
      const lost = complete.filter((r) => byRequest.get(r.requestId) !== 1).map((r) => r.requestId);
      expect(lost).toEqual([]);
      expect([...byRequest.values()].every((n) => n === 1)).toBe(true); // never twice
      expect(new Set(ledger.map((e) => e.generationId)).size).toBe(ledger.length);
      const okIds = new Set(ledger.filter((e) => e.outcome === "ok").map((e) => e.requestId));
      expect(complete.filter((r) => !okIds.has(r.requestId))).toEqual([]);
      expect(byRequest.get(after.requestId)).toBe(1);
    } finally {
      await store.close();
    }
  });
});
