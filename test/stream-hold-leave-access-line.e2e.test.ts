// A client that leaves while a stream's opening events are held (the first second) is billed as one that left
// mid-stream (docs/routing.md): the ledger bills the upstream's reported usage at that endpoint's prices. Its access
// line used to have no provider and no costUsd and said `"stream": false` (the stream was never adopted as the
// answer), and its ledger record was not marked estimated where the same leave a second later was: the line and the
// record now say the same for both.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ServerResponse } from "node:http";
import { keyEntry, ledgerRecordOf, testKey } from "./helpers/gateway.ts";
import { startLoggedGateway, type CapturedLog } from "./helpers/log-capture.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { FAKE_ANTHROPIC_KEY } from "./upstreams/anthropic.ts";
import type { RunningGateway } from "../core/server.ts";

const KEY = testKey("holdleave");

let claude: FakeOpenAI; // its hook answers as an Anthropic Messages upstream
let gw: RunningGateway;
let log: CapturedLog;
let baseURL: string;

/** Called when the upstream has sent message_start. */
let opened: () => void = () => {};

/** message_start (input 42, output 1), then a ping every 300 ms and no answer: a long prefill. */
function prefill(_req: unknown, res: ServerResponse): boolean {
  res.writeHead(200, { "content-type": "text/event-stream" });
  const event = (type: string, data: Record<string, unknown>) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  event("message_start", { message: { id: "msg_1", type: "message", role: "assistant", model: "claude-x", content: [], stop_reason: null, usage: { input_tokens: 42, output_tokens: 1 } } });
  opened();
  const pings = setInterval(() => event("ping", {}), 300);
  res.once("close", () => clearInterval(pings));
  return true;
}

beforeAll(async () => {
  claude = await startFakeOpenAI();
  claude.hook = prefill;
  ({ gw, log, baseURL } = await startLoggedGateway({
    store: { kind: "memory" },
    providers: { claude: { protocol: "anthropic", base_url: claude.baseUrl, api_key: FAKE_ANTHROPIC_KEY } },
    models: {
      "test/claude": { context_window: 100_000, max_tokens: 1000, endpoints: [{ provider: "claude", model: "claude-x", pricing: { input: "0.000003", output: "0.000015" } }] },
    },
    projects: { p: { keys: [keyEntry("k", KEY)] } },
  }, {}, "info"));
});
afterAll(async () => {
  await gw?.close();
  await claude?.close();
});

/**
 * A Messages stream the client leaves `leaveAfterMs` after its upstream sent message_start (timed from there, not
 * from the request: the gateway's own start-up under load must not move the leave out of the hold); the bytes it had.
 */
async function leaveAfter(leaveAfterMs: number, requestId: string): Promise<number> {
  const ac = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  opened = () => { timer = setTimeout(() => ac.abort(), leaveAfterMs); };
  let bytes = 0;
  try {
    const res = await fetch(`${baseURL}/messages`, {
      method: "POST",
      headers: { "x-api-key": KEY, "anthropic-version": "2023-06-01", "content-type": "application/json", "x-request-id": requestId },
      body: JSON.stringify({ model: "test/claude", max_tokens: 50, stream: true, messages: [{ role: "user", content: "hi" }] }),
      signal: ac.signal,
    });
    for await (const b of res.body as unknown as AsyncIterable<Uint8Array>) bytes += b.length;
  } catch {
    // the client left
  }
  clearTimeout(timer);
  return bytes;
}

const recordOf = (requestId: string) => ledgerRecordOf(gw, requestId);

describe("a client that leaves during the hold of a stream's opening events", () => {
  it("has the access line and ledger record of one that leaves after it: provider, cost, stream, estimated", async () => {
    const during = `hold-leave-during-${Date.now()}`;
    const after = `hold-leave-after-${Date.now()}`;
    expect(await leaveAfter(500, during)).toBe(0); // inside the 1 s hold: the client has no byte yet
    expect(await leaveAfter(1800, after)).toBeGreaterThan(0); // message_start and pings already sent
    const [duringLine] = await log.accessOnce((l) => l.requestId === during, 1);
    const [afterLine] = await log.accessOnce((l) => l.requestId === after, 1);
    const [duringRec, afterRec] = [await recordOf(during), await recordOf(after)];

    // 42 input + 1 output tokens at the endpoint's prices: $0.000141.
    expect(duringRec).toMatchObject({ provider: "claude", outcome: "aborted", inputTokens: 42, outputTokens: 1, costUsd: "0.000141" });
    for (const [line, rec] of [[duringLine, duringRec], [afterLine, afterRec]] as const) {
      expect(line).toMatchObject({ provider: "claude", stream: true, aborted: true, outcome: "aborted", inputTokens: 42, outputTokens: 1, costUsd: rec.costUsd });
    }
    expect(afterRec).toMatchObject({ provider: "claude", inputTokens: 42, outputTokens: 1, costUsd: "0.000141" });
    // Both billed message_start's running count, not the upstream's final one.
    expect(duringRec.estimated).toBe(afterRec.estimated);
    expect(duringRec.estimated).toBe(true);
  });
});
