// Shutdown with an OTLP collector that accepts connections and never answers: the span flush gets a short bound and
// never holds up the store's close, so the README's shutdown budget (grace + ~10 s for the store) stays true.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServer, type Server, type Socket } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { startLoggedGateway, type CapturedLog } from "./helpers/log-capture.ts";
import { keyEntry, postJson, testKey } from "./helpers/gateway.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import type { RunningGateway } from "../core/server.ts";

const KEY = testKey("frozen-otlp");

/** A TCP server that takes connections and what they send, and never answers. */
async function startBlackhole(): Promise<{ port: number; received: () => number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  let bytes = 0;
  const server: Server = createServer((s) => {
    sockets.add(s);
    s.on("data", (d) => (bytes += d.length));
    s.on("error", () => {});
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as { port: number }).port,
    received: () => bytes,
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

let collector: Awaited<ReturnType<typeof startBlackhole>>;
let upstream: FakeOpenAI;
let gw: RunningGateway | undefined;
let log: CapturedLog;

beforeAll(async () => {
  collector = await startBlackhole();
  upstream = await startFakeOpenAI({ text: "hello" });
  ({ gw, log } = await startLoggedGateway({
    store: { kind: "memory" },
    telemetry: { otlp: { endpoint: `http://127.0.0.1:${collector.port}/v1/traces` } },
    providers: { up: { protocol: "openai", base_url: upstream.baseUrl, api_key: "sk-fake-upstream" } },
    models: { "test/m": { endpoints: [{ provider: "up", model: "m" }] } },
    projects: { p: { keys: [keyEntry("k", KEY)] } },
  }, {}, "info"));
});

afterAll(async () => {
  await gw?.close().catch(() => {});
  await upstream?.close();
  await collector?.close();
});

const dropped = () => log.records().filter((r) => /^tracing: \d+ spans dropped/.test(r.msg));

describe("shutdown with a frozen OTLP collector", () => {
  it("closes the store without waiting for the collector, gives the spans a short bound, and says they were dropped", async () => {
    const r = await postJson(`${gw!.url}/api/v1/chat/completions`, { model: "test/m", messages: [{ role: "user", content: "hi" }] }, { authorization: `Bearer ${KEY}` });
    expect(r.status).toBe(200);
    // The request's spans are on their way to the collector, which will never answer.
    while (collector.received() === 0) await sleep(20);
    const store = gw!.gateway.store;
    const closeStore = store.close.bind(store);
    let droppedWhenStoreClosed: number | undefined;
    store.close = () => {
      droppedWhenStoreClosed = dropped().length;
      return closeStore();
    };
    const started = performance.now();
    await gw!.shutdown({ graceMs: 1000 });
    const took = performance.now() - started;
    gw = undefined;
    // The store was closed while the span flush was still waiting, not after it gave up.
    expect(droppedWhenStoreClosed).toBe(0);
    expect(dropped()).toHaveLength(1);
    expect(dropped()[0]!.msg).toMatch(/^tracing: 2 spans dropped at shutdown: the collector did not take them within \d+ ms$/);
    expect(dropped()[0]!.level).toBe(40); // warn
    // Generous: the exporter's own timeout (10 s) is what a shutdown waited for before.
    expect(took).toBeLessThan(7000);
  }, 30_000);
});
