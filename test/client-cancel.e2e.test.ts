// A client that cancels (presses Stop, curl -m) is neither the gateway's failure nor the provider's: its attempt is
// counted as cancelled in gateway_upstream_duration_seconds (not as a failed upstream attempt on the dashboard), and
// the access line, the attempt and the ledger say CANCELLED, not UPSTREAM_ERROR.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { keyEntry, testKey } from "./helpers/gateway.ts";
import { startLoggedGateway, type CapturedLog } from "./helpers/log-capture.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import type { RunningGateway } from "../core/server.ts";

const LIVE = testKey("cancel-live");
const SANDBOX = testKey("cancel-sbx", true);
const PRICING = { input: "0.000002", output: "0.00001" };

let alpha: FakeOpenAI;
let slow: FakeOpenAI;
let gw: RunningGateway;
let log: CapturedLog;
let baseURL: string;

beforeAll(async () => {
  alpha = await startFakeOpenAI({ text: "alpha answers" });
  slow = await startFakeOpenAI({ text: "one two three four five six seven eight nine ten eleven twelve", chunkDelayMs: 200 });
  ({ gw, log, baseURL } = await startLoggedGateway({
    store: { kind: "memory" },
    providers: {
      alpha: { protocol: "openai", base_url: alpha.baseUrl, api_key: "sk-fake-upstream" },
      slow: { protocol: "openai", base_url: slow.baseUrl, api_key: "sk-fake-upstream" },
      // Sandbox keys reach the simulator; this one takes 5 s to its first token.
      sim: { protocol: "sim", sim: { ttft_ms: 5000 } },
    },
    models: {
      "test/slow": { endpoints: [{ provider: "alpha", model: "a-model", pricing: PRICING }] },
      "test/trickle": { endpoints: [{ provider: "slow", model: "s-model", pricing: PRICING }] },
    },
    projects: { p: { keys: [keyEntry("k-live", LIVE), keyEntry("k-sbx", SANDBOX)] } },
  }));
});

afterAll(async () => {
  await gw?.close();
  await alpha?.close();
  await slow?.close();
});

/** A chat the client gives up on after 200 ms (curl -m 0.2). */
async function cancelledChat(key: string, requestId: string): Promise<void> {
  await fetch(`${baseURL}/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "x-request-id": requestId },
    body: JSON.stringify({ model: "test/slow", messages: [{ role: "user", content: "hi" }] }),
    signal: AbortSignal.timeout(200),
  }).catch(() => undefined);
}

async function accessLine(requestId: string): Promise<Record<string, any>> {
  const [line] = await log.accessOnce((r) => r.requestId === requestId, 1);
  if (!line) throw new Error(`no access line for ${requestId}`);
  return line;
}

async function upstreamCount(provider: string, outcome: string): Promise<number> {
  const text = await (await fetch(gw.metricsUrl!)).text();
  const re = new RegExp(`^gateway_upstream_duration_seconds_count\\{provider="${provider}",model="test/slow",outcome="${outcome}"\\} (\\S+)$`, "m");
  return Number(re.exec(text)?.[1] ?? 0);
}

describe("a client that cancels", () => {
  for (const [name, key, provider] of [["a live request to a slow upstream", LIVE, "alpha"], ["a sandbox request to the simulator", SANDBOX, "sim"]] as const) {
    it(`${name}: counted as cancelled, not as a failed upstream attempt; CANCELLED in the access line and the ledger`, async () => {
      if (provider === "alpha") alpha.failures.push({ kind: "hang" });
      const requestId = `req-cancel-${provider}`;
      await cancelledChat(key, requestId);
      const line = await accessLine(requestId);
      expect(line).toMatchObject({ status: 499, aborted: true, errorCode: "CANCELLED" });
      expect(line.attempts).toEqual([expect.objectContaining({ provider, status: 499, errorCode: "CANCELLED" })]);
      expect(await upstreamCount(provider, "error")).toBe(0);
      expect(await upstreamCount(provider, "cancelled")).toBe(1);
      const record = (await gw.gateway.store.ledger({ project: "p" })).find((e) => e.requestId === requestId);
      expect(record).toMatchObject({ status: 499, outcome: "aborted", attemptList: [expect.objectContaining({ provider, error: "CANCELLED" })] });
    });
  }

  it.each(["chat", "responses", "messages"] as const)("a %s client that leaves mid-stream, its answer begun: the attempt is CANCELLED too", async (api) => {
    const requestId = `req-cancel-mid-${api}`;
    const path = api === "chat" ? "/chat/completions" : `/${api}`;
    const body = api === "responses" ? { model: "test/trickle", input: "hi", stream: true }
      : { model: "test/trickle", max_tokens: 100, stream: true, messages: [{ role: "user", content: "hi" }] };
    const ac = new AbortController();
    const res = await fetch(`${baseURL}${path}`, {
      method: "POST", signal: ac.signal,
      headers: { authorization: `Bearer ${LIVE}`, "content-type": "application/json", "x-request-id": requestId, "anthropic-version": "2023-06-01" },
      body: JSON.stringify(body),
    });
    const reader = res.body!.getReader();
    let text = "";
    while (!text.includes("two")) text += new TextDecoder().decode((await reader.read()).value);
    ac.abort();
    const line = await accessLine(requestId);
    expect(line).toMatchObject({ status: 200, aborted: true }); // the 200 went out; the client left after
    expect(line.attempts).toEqual([expect.objectContaining({ provider: "slow", status: 499, errorCode: "CANCELLED" })]);
  });

  it("before its body ends (no attempt at all): CANCELLED in the access line", async () => {
    const { port } = new URL(baseURL);
    const socket = connect(Number(port), "127.0.0.1");
    socket.on("error", () => {});
    await new Promise<void>((r) => socket.once("connect", () => r()));
    socket.write(`POST /api/v1/chat/completions HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer ${LIVE}\r\nContent-Type: application/json\r\n` +
      `Content-Length: 1000\r\nX-Request-Id: req-cancel-mid-body\r\n\r\n{"model":"test/slow","messages":[`);
    await sleep(100);
    socket.destroy();
    const line = await accessLine("req-cancel-mid-body");
    expect(line).toMatchObject({ status: 499, aborted: true, errorCode: "CANCELLED", attempts: [] });
  });
});
