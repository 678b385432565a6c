// A Responses stream whose upstream never stops (a broken or hostile upstream, a wrong base_url) was relayed, and its
// answer built up, without end: 50 MB of deltas held the gateway at 1.37 GB. A stream's answer is now held to
// server.upstream_limits.answer_bytes, as a JSON answer is: past it the client gets response.failed and the error
// event naming the bound and the setting (answer_too_large), the upstream is let go, the ledger bills the text
// relayed, and nothing is stored. A translated stream whose first chunk is past it fails before it begins, as a JSON
// answer that large does.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keyEntry, ledgerRecordOf, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { until } from "./helpers/until.ts";
import { startRunawayUpstream, WORD, type RunawayUpstream } from "./upstreams/runaway-stream.ts";

const KEY = testKey("runaway");
const BOUND = 4096;
const SETTING = "server.upstream_limits.answer_bytes";

let up: RunawayUpstream;
let gw: TestGateway;

beforeAll(async () => {
  up = await startRunawayUpstream();
  const pricing = { input: "0.000001", output: "0.000002" };
  gw = await startTestGateway({
    server: { upstream_limits: { answer_bytes: BOUND } },
    store: { kind: "memory" },
    routing: { max_attempts: 1 },
    providers: { up: { protocol: "openai", base_url: up.baseUrl, api_key: "sk-fake-upstream" } },
    models: {
      "t/native": { type: "language", endpoints: [{ provider: "up", model: "gpt-4o", native_responses: true, pricing }] },
      "t/chat": { type: "language", endpoints: [{ provider: "up", model: "llama", pricing }] },
    },
    projects: { p: { keys: [keyEntry("k", KEY)] } },
  });
}, 30_000);

afterAll(async () => {
  await gw?.close();
  await up?.close();
});

/** A stream's events, parsed. */
function eventsOf(text: string): Array<{ event?: string; data: any }> {
  return text.split("\n\n").filter((b) => b.includes("data:")).map((block) => {
    const event = /^event: (.*)$/m.exec(block)?.[1];
    const data = block.split("\n").filter((l) => l.startsWith("data: ")).map((l) => l.slice(6)).join("\n");
    return { event, data: JSON.parse(data) };
  });
}

const ask = (model: string, requestId: string) =>
  postJson(`${gw.baseURL}/responses`, { model, input: "Write for ever", stream: true }, { authorization: `Bearer ${KEY}`, "x-request-id": requestId });

describe("a Responses stream past server.upstream_limits.answer_bytes", () => {
  for (const [name, model] of [["passed through from an OpenAI Responses upstream", "t/native"], ["translated from a chat upstream", "t/chat"]] as const) {
    it(`${name}: cut at the bound with answer_too_large, the upstream let go, the text relayed billed, nothing stored`, async () => {
      const calls = up.calls.length;
      const requestId = `runaway-${model}`;
      const r = await ask(model, requestId);
      expect(r.status).toBe(200);
      const events = eventsOf(r.text);
      expect(events[0]!.event).toBe("response.created");
      const deltas = events.filter((e) => e.event === "response.output_text.delta");
      const relayed = deltas.reduce((n, e) => n + e.data.delta.length, 0);
      // The relay counts the open message's output_item.added too (it keeps the item until its done), and scans deltas
      // only once their events' sizes could reach the bound: a runaway is cut after at most twice the bound's text.
      const added = model === "t/native" ? JSON.stringify(events.find((e) => e.event === "response.output_item.added")!.data).length : 0;
      const most = model === "t/native" ? 2 * BOUND : BOUND;
      expect(relayed, "text relayed: up to the bound (passed through: twice it), never past it").toBeLessThanOrEqual(most);
      expect(relayed).toBeGreaterThan(BOUND - added - 2 * WORD.length);
      expect(events.map((e) => e.event)).not.toContain("response.completed");
      const [failed, error] = events.slice(-2);
      expect(failed!.event).toBe("response.failed");
      expect(failed!.data.response.status).toBe("failed");
      // A code Codex CLI stops on (a server_error it sent again five times, each run upstream again), the gateway's code named.
      expect(failed!.data.response.error).toEqual({ code: "invalid_prompt", message: expect.stringContaining("UPSTREAM_ERROR answer_too_large") });
      expect(error!.event).toBe("error");
      expect(error!.data.error).toMatchObject({ code: "UPSTREAM_ERROR", details: { reason: "answer_too_large", limit_bytes: BOUND, setting: SETTING } });
      expect(error!.data.message).toContain(`larger than ${BOUND} bytes`);
      expect(error!.data.message).toContain(SETTING);

      // The upstream's connection was closed, not read to its end.
      expect(up.calls.length - calls, "upstream calls").toBe(1);
      const call = up.calls.at(-1)!;
      await until("the upstream call's end", async () => (call.settled ? true : undefined));
      expect(call.cut, "the upstream was cut off").toBe(true);

      // Billed as a cut stream: the text the client got, one estimated token a word.
      const rec = await ledgerRecordOf(gw, requestId);
      expect(rec).toMatchObject({ status: 200, outcome: "stream_error", estimated: true, outputTokens: deltas.length });
      expect(Number(rec.costUsd)).toBeGreaterThan(0);

      // No record of the half-made response.
      const stored = await fetch(`${gw.baseURL}/responses/${events[0]!.data.response.id}`, { headers: { authorization: `Bearer ${KEY}` } });
      expect(stored.status).toBe(404);
    });
  }

  it("a first chunk already past the bound: the request fails as a JSON answer that large does, before any stream", async () => {
    up.first = "x".repeat(BOUND + 1);
    try {
      const r = await ask("t/chat", "runaway-first");
      expect(r.status).toBe(502);
      expect(r.headers.get("x-should-retry")).toBe("false");
      expect(r.json.error).toMatchObject({ code: "UPSTREAM_ERROR", details: { reason: "answer_too_large", limit_bytes: BOUND, setting: SETTING } });
      const call = up.calls.at(-1)!;
      await until("the upstream call's end", async () => (call.settled ? true : undefined));
      expect(call.cut).toBe(true);
      expect(await ledgerRecordOf(gw, "runaway-first")).toMatchObject({ status: 502, outcome: "error" });
    } finally {
      up.first = WORD;
    }
  });
});
