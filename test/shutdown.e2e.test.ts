// Graceful shutdown of the real CLI process (SQLite store, the default pipeline, a live key) against a slow
// upstream: SIGTERM stops accepting at once, streams in flight finish (or, past the grace period, end with the
// protocol's error event), every one of them is in the ledger, and the process exits 0.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { connect, type Socket } from "node:net";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ChildProcess } from "node:child_process";
import YAML from "yaml";
import { ulid } from "ulid";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { startChildGateway, type ChildGateway } from "./helpers/child-gateway.ts";
import { startTestGateway } from "./helpers/gateway.ts";
import { slowStoreCall } from "./helpers/slow-store.ts";
import { KEY, chat, policyConfig } from "./helpers/policy-config.ts";
import { SqliteStore } from "../core/store/sqlite.ts";
import type { LedgerEntry } from "../core/store/types.ts";

/** A web page's origin, allowed by server.cors. */
const PAGE = "https://app.example";
const LONG_TEXT = Array.from({ length: 40 }, (_, i) => `word${i}`).join(" ");

interface OpenStream {
  requestId: string;
  /** Resolves once the first event arrived (the request is in flight upstream). */
  first: Promise<void>;
  /** The whole body, once it ended; `ended` is false when the connection broke instead. */
  done: Promise<{ status: number; text: string; ended: boolean }>;
}

function openStream(base: string, path: string, body: unknown): OpenStream {
  const requestId = `req_${ulid()}`;
  let firstSeen!: () => void;
  const first = new Promise<void>((r) => (firstSeen = r));
  const done = (async () => {
    const res = await fetch(`${base}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${KEY}`, "x-request-id": requestId, "anthropic-version": "2023-06-01" },
      body: JSON.stringify(body),
    });
    let text = "";
    const decoder = new TextDecoder();
    try {
      const reader = res.body!.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
        if (text.includes("\n\n")) firstSeen();
      }
      return { status: res.status, text, ended: true };
    } catch {
      return { status: res.status, text, ended: false };
    } finally {
      firstSeen();
    }
  })();
  return { requestId, first, done };
}

function exitOf(proc: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((r) => proc.once("exit", (code, signal) => r({ code, signal })));
}

/** A raw TCP connect: resolves with the error code, or "connected". */
function tryConnect(port: number): Promise<string> {
  return new Promise((resolve) => {
    const s = connect(port, "127.0.0.1");
    s.once("connect", () => {
      s.destroy();
      resolve("connected");
    });
    s.once("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? "error"));
  });
}

/** Polls until the listener is gone (the shutdown has started): ECONNREFUSED, or whatever else a connect got. */
async function refusedAfterShutdown(port: number): Promise<string> {
  for (;;) {
    const r = await tryConnect(port);
    // A connect caught in the listener's backlog as it closes is reset: the next one tells.
    if (r !== "connected" && r !== "ECONNRESET") return r;
    await new Promise((res) => setTimeout(res, 20));
  }
}

/** A raw keep-alive connection that collects everything the server sends until it closes the socket. */
function rawConnection(port: number): Promise<{ socket: Socket; received: () => string; closed: Promise<void> }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let data = "";
    socket.setEncoding("utf8");
    socket.on("data", (d) => (data += d));
    const closed = new Promise<void>((r) => socket.once("close", () => r()));
    socket.once("error", () => {});
    socket.once("connect", () => resolve({ socket, received: () => data, closed }));
    socket.once("error", reject);
  });
}

async function ledgerOf(dbFile: string): Promise<LedgerEntry[]> {
  const store = new SqliteStore(dbFile);
  try {
    return await store.ledger({ project: "acme" });
  } finally {
    await store.close();
  }
}

/**
 * Streams the fake upstream holds open after its first chunks until `release()`, so they are in flight for as long
 * as the test needs. Framed as the fake (and OpenAI) frames them, usage chunk included when asked for.
 */
function holdStreams(fake: FakeOpenAI): () => void {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  fake.hook = (rec, res) => {
    if (!rec.body?.stream) return false;
    const usage = rec.body.stream_options?.include_usage === true;
    const frame = (choices: unknown[], extra: Record<string, unknown> = {}) =>
      `data: ${JSON.stringify({ id: "chatcmpl-held", object: "chat.completion.chunk", created: 1770933883, model: rec.body.model, service_tier: "default", system_fingerprint: "fp_fake", choices, ...(usage ? { usage: null } : {}), ...extra })}\n\n`;
    const delta = (d: Record<string, unknown>, finish: string | null = null) => frame([{ index: 0, delta: d, logprobs: null, finish_reason: finish }]);
    res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", connection: "keep-alive", "x-request-id": "req_fake_held" });
    res.write(delta({ role: "assistant", content: "", refusal: null }) + delta({ content: "Held" }));
    void released.then(() => {
      if (res.destroyed) return;
      res.write(delta({ content: " until released." }) + delta({}, "stop"));
      if (usage) res.write(frame([], { usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 } }));
      res.end("data: [DONE]\n\n");
    });
    return true;
  };
  return release;
}

describe("graceful shutdown of `model-gateway start`", () => {
  let fake: FakeOpenAI;
  let gw: ChildGateway | undefined;
  beforeAll(async () => {
    // ~100 ms between chunks: a 40-word stream takes about 4 s, the default text about 1 s.
    fake = await startFakeOpenAI({ chunkDelayMs: 100 });
  });
  afterEach(async () => {
    fake.hook = undefined;
    await gw?.kill9();
    gw = undefined;
  });
  afterAll(async () => {
    await fake?.close();
  });

  function setup(server?: Record<string, unknown>) {
    const dir = mkdtempSync(join(tmpdir(), "mg-shutdown-"));
    const configFile = join(dir, "gateway.yaml");
    writeFileSync(configFile, YAML.stringify({
      ...policyConfig(fake.baseUrl, { store: { kind: "sqlite", path: "./state/gateway.db" }, acme: { budget: { usd: "5", period: "month" } } }),
      ...(server ? { server } : {}),
    }));
    return { configFile, dbFile: join(dir, "state", "gateway.db") };
  }

  it("on SIGTERM stops accepting, lets streams in flight finish, keeps their ledger records and exits 0", async () => {
    const { configFile, dbFile } = setup({ cors: { allow_origins: [PAGE] } });
    gw = await startChildGateway(configFile);
    const port = Number(new URL(gw.url).port);
    const release = holdStreams(fake);

    // An idle keep-alive connection (one request answered), a keep-alive connection in the middle of sending its
    // next request, and two streams held in flight by the upstream (one on a raw keep-alive connection).
    const idle = await rawConnection(port);
    idle.socket.write("GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n");
    while (!idle.received().includes("ok")) await new Promise((r) => idle.socket.once("data", r));
    const late = await rawConnection(port);
    late.socket.write("GET /healthz HTTP/1.1\r\nhost: x\r\nx-request-id: req_after_sigterm\r\n");
    // An Anthropic SDK call to a Messages path no route takes (messages.batches): Anthropic's envelope, as before a shutdown.
    const lateBatch = await rawConnection(port);
    lateBatch.socket.write(`POST /api/v1/messages/batches HTTP/1.1\r\nhost: x\r\nx-api-key: ${KEY}\r\nx-request-id: req_batch_after_sigterm\r\ncontent-length: 2\r\n`);
    const latePage = await rawConnection(port); // a browser page's call, from an origin server.cors allows
    latePage.socket.write(`GET /api/v1/models HTTP/1.1\r\nhost: x\r\norigin: ${PAGE}\r\nauthorization: Bearer ${KEY}\r\n`);
    const stream = openStream(gw.baseURL, "/chat/completions", chat("openai/gpt-4o-mini", { stream: true, max_tokens: 100 }));
    await stream.first;
    const busy = await rawConnection(port);
    const busyId = `req_${ulid()}`;
    const busyBody = JSON.stringify(chat("openai/gpt-4o-mini", { stream: true, max_tokens: 100 }));
    busy.socket.write(
      `POST /api/v1/chat/completions HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${KEY}\r\ncontent-type: application/json\r\n` +
        `x-request-id: ${busyId}\r\ncontent-length: ${Buffer.byteLength(busyBody)}\r\n\r\n${busyBody}`,
    );
    while (!busy.received().includes("Held")) await new Promise((r) => busy.socket.once("data", r));

    const exited = exitOf(gw.proc);
    gw.proc.kill("SIGTERM");
    expect(await refusedAfterShutdown(port)).toBe("ECONNREFUSED"); // no new connections
    await idle.closed; // the idle keep-alive connection is closed at once, not at its keep-alive timeout

    // The request that completes on an open connection during the shutdown: 503, envelope, connection closed.
    late.socket.write("\r\n");
    await late.closed;
    const refusal = late.received();
    expect(refusal).toMatch(/^HTTP\/1\.1 503 /);
    expect(refusal.toLowerCase()).toContain("connection: close");
    expect(refusal.toLowerCase()).toContain("x-request-id: req_after_sigterm");
    expect(JSON.parse(refusal.slice(refusal.indexOf("\r\n\r\n") + 4)).error).toMatchObject({ code: "INTERNAL", message: expect.stringMatching(/shutting down/) });
    lateBatch.socket.write("\r\n{}");
    await lateBatch.closed;
    const batchRefusal = lateBatch.received();
    expect(batchRefusal).toMatch(/^HTTP\/1\.1 503 /);
    expect(batchRefusal).toMatch(/\r\nrequest-id: req_batch_after_sigterm\r\n/i); // Anthropic's header, beside x-request-id
    expect(JSON.parse(batchRefusal.slice(batchRefusal.indexOf("\r\n\r\n") + 4))).toMatchObject({ type: "error", error: { type: "api_error", message: expect.stringMatching(/shutting down/) } });
    // The page may read that 503 and its Retry-After, as any other answer of the API.
    latePage.socket.write("\r\n");
    await latePage.closed;
    const pageRefusal = latePage.received().toLowerCase();
    expect(pageRefusal).toMatch(/^http\/1\.1 503 /);
    expect(pageRefusal).toContain(`access-control-allow-origin: ${PAGE}`);
    expect(pageRefusal).toMatch(/access-control-expose-headers: [^\r]*retry-after/);

    expect(gw.proc.exitCode).toBeNull(); // still waiting for the streams
    release();
    const result = await stream.done;
    expect(result.status).toBe(200);
    expect(result.ended).toBe(true);
    expect(result.text).toContain("until released.");
    expect(result.text.trimEnd().endsWith("data: [DONE]")).toBe(true);
    expect(result.text).not.toContain('"error"');
    await busy.closed; // its keep-alive connection is closed once the stream ended
    expect(busy.received()).toContain("data: [DONE]");
    expect(busy.received()).toMatch(/0\r\n\r\n$/); // the chunked body's last chunk: the response completed

    expect(await exited).toEqual({ code: 0, signal: null });
    gw = undefined;

    const ledger = await ledgerOf(dbFile);
    for (const id of [stream.requestId, busyId]) {
      const mine = ledger.filter((e) => e.requestId === id);
      expect(mine, id).toHaveLength(1);
      expect(mine[0]).toMatchObject({ outcome: "ok", status: 200, estimated: false });
      expect(mine[0]!.outputTokens).toBeGreaterThan(0);
    }
  });

  it("past the grace period ends streams with the protocol's error event, aborts the upstream calls and still records them", async () => {
    const { configFile, dbFile } = setup({ shutdown_grace_ms: 300 });
    gw = await startChildGateway(configFile);
    fake.requests.length = 0;
    // Two seconds between chunks: both streams are far from done when the grace period ends.
    fake.failures.push({ kind: "slow", chunkDelayMs: 2000 }, { kind: "slow", chunkDelayMs: 2000 });
    const chatStream = openStream(gw.baseURL, "/chat/completions", chat("openai/gpt-4o-mini", { stream: true, max_tokens: 100 }));
    await chatStream.first;
    const messagesStream = openStream(gw.baseURL, "/messages", { model: "openai/gpt-4o-mini", max_tokens: 100, stream: true, messages: [{ role: "user", content: "Hello" }] });
    await messagesStream.first;

    const exited = exitOf(gw.proc);
    gw.proc.kill("SIGTERM");
    const [c, m] = await Promise.all([chatStream.done, messagesStream.done]);
    expect(await exited).toEqual({ code: 0, signal: null });
    gw = undefined;

    // Chat: a final `data: {"error":...}` event, no [DONE]; the body ends.
    expect(c).toMatchObject({ status: 200, ended: true });
    expect(c.text).not.toContain("[DONE]");
    const lastChat = c.text.trim().split("\n\n").at(-1)!;
    expect(JSON.parse(lastChat.replace(/^data: /, ""))).toMatchObject({ error: { code: "INTERNAL", message: expect.stringMatching(/shutting down/) } });
    // Messages: `event: error`, no message_stop.
    expect(m).toMatchObject({ status: 200, ended: true });
    expect(m.text).toContain("event: message_start");
    expect(m.text).not.toContain("message_stop");
    const lastMessages = m.text.trim().split("\n\n").at(-1)!;
    expect(lastMessages.split("\n")[0]).toBe("event: error");
    expect(JSON.parse(lastMessages.split("\n")[1]!.replace(/^data: /, ""))).toMatchObject({ type: "error", error: { code: "INTERNAL" } });

    // The upstream calls were aborted, not left running.
    expect(fake.requests).toHaveLength(2);
    for (const r of fake.requests) expect(r.abortedAt).toBeDefined();

    const ledger = await ledgerOf(dbFile);
    for (const id of [chatStream.requestId, messagesStream.requestId]) {
      const mine = ledger.filter((e) => e.requestId === id);
      expect(mine, id).toHaveLength(1);
      expect(mine[0]!.outcome).toBe("stream_error");
    }
  });

  it("a second signal during the shutdown exits at once with code 130", async () => {
    const { configFile } = setup();
    gw = await startChildGateway(configFile);
    fake.failures.push({ kind: "slow", chunkDelayMs: 5000 });
    const stream = openStream(gw.baseURL, "/chat/completions", chat("openai/gpt-4o-mini", { stream: true, max_tokens: 100 }));
    await stream.first;
    const exited = exitOf(gw.proc);
    gw.proc.kill("SIGTERM");
    await refusedAfterShutdown(Number(new URL(gw.url).port));
    gw.proc.kill("SIGINT");
    expect(await exited).toEqual({ code: 130, signal: null });
    gw = undefined;
    expect((await stream.done).ended).toBe(false); // cut, not finished: the process did not wait for it
  });

  it("close() (an embedding's stop, not a signal) cuts requests in flight and keeps their ledger records", async () => {
    const embedded = await startTestGateway(readFileSync(setup().configFile, "utf8"));
    const dbFile = join(embedded.dir, "state", "gateway.db");
    // The record takes 300 ms to reach the store, as on a loaded machine: close() must wait for it.
    slowStoreCall(embedded.gateway.store, "record"); // this gateway is closed by the test: nothing to restore
    holdStreams(fake); // never released: the stream is in flight when close() runs
    const stream = openStream(embedded.baseURL, "/chat/completions", chat("openai/gpt-4o-mini", { stream: true, stream_options: { include_usage: true } }));
    await stream.first;
    await embedded.close();
    expect((await stream.done).ended).toBe(false);
    expect(fake.requests.at(-1)!.abortedAt).toBeDefined(); // the upstream call was stopped, not left running
    const mine = (await ledgerOf(dbFile)).filter((e) => e.requestId === stream.requestId);
    expect(mine).toHaveLength(1); // written before the store closed
    expect(mine[0]!.status).toBe(200);
  });
});
