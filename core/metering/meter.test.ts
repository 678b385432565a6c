import { describe, expect, it, vi } from "vitest";
import { Meter } from "./meter.ts";
import type { GatewayContext } from "../pipeline/context.ts";
import { GatewayError } from "../errors.ts";
import { afterTerminalUsage } from "./terminal-usage.ts";

/** A request that reached no provider and holds nothing: its commit writes no record, so only withRecord's work runs. */
function unbilled() {
  const warn = vi.fn();
  const ctx = { attempts: [], requestId: "req_meter_test", gateway: { log: { warn }, store: {} } } as unknown as GatewayContext;
  return { meter: new Meter(ctx), warn };
}

describe("Meter.withRecord", () => {
  it("runs its work once, with the commit's outcome, and the commit waits for it", async () => {
    const { meter } = unbilled();
    const seen: unknown[] = [];
    let finish!: () => void;
    meter.withRecord((outcome) => {
      seen.push(outcome);
      return new Promise<void>((r) => (finish = r));
    });
    let committed = false;
    const commit = meter.commit({ status: 200, aborted: false }).then(() => (committed = true));
    await new Promise((r) => setTimeout(r, 10));
    expect(committed).toBe(false);
    finish();
    await commit;
    await meter.commit({ status: 500, aborted: true });
    expect(seen).toEqual([{ status: 200, aborted: false }]);
  });

  it("logs work that throws or rejects, and the commit still succeeds", async () => {
    const { meter, warn } = unbilled();
    meter.withRecord(() => {
      throw new Error("thrown at once");
    });
    meter.withRecord(() => Promise.reject(new Error("rejected later")));
    await expect(meter.commit({ status: 200, aborted: false })).resolves.toBeUndefined();
    expect(warn.mock.calls.map((c) => c[1].error)).toEqual(["Error: thrown at once", "Error: rejected later"]);
  });
});

describe("Meter.holdRecord", () => {
  it("a record that waits after the request's end (a plugin reading the stream) keeps the request's latency, not the reading's", async () => {
    const entries: { latencyMs: number }[] = [];
    const startedAt = performance.now();
    const ctx = {
      requestId: "req_held", generationId: "gen_held", startedAt, endpoint: "embeddings",
      auth: { keyId: "k", projectId: "p", sandbox: true },
      attempts: [{ model: "m", provider: "p", status: 200, latencyMs: 1 }], targets: [],
      usage: { inputTokens: 5, outputTokens: 0 },
      response: { kind: "json", status: 202, body: {} },
      config: { metrics: { projectLabels: false } },
      gateway: { log: { warn() {} }, store: { record: async (e: { latencyMs: number }) => void entries.push(e) } },
    } as unknown as GatewayContext;
    const meter = new Meter(ctx);
    let readDone!: () => void;
    meter.holdRecord(() => new Promise<void>((r) => (readDone = r)));
    const committed = meter.commit({ status: 202, aborted: false }); // the request's end
    const latency = performance.now() - startedAt;
    await new Promise((r) => setTimeout(r, 50)); // the plugin reads on
    readDone();
    await committed;
    expect(entries).toHaveLength(1);
    expect(entries[0]!.latencyMs).toBeLessThanOrEqual(Math.round(latency * 10) / 10 + 0.1);
  });
});

describe("Meter.finalUsage of a Responses mcp stream cut during a later turn", () => {
  // Turn 1 reported 1000 input tokens; turn 2 (its prompt the whole body so far, 3000 characters) was cut before its
  // usage arrived: its prompt is estimated as a request of its own would be (characters / 3), on top of turn 1's.
  function cut(turns: number, turnUsages: Array<{ inputTokens: number; outputTokens: number }>) {
    const body = { model: "m/x", input: "i".repeat(3000 - 30) };
    const chars = JSON.stringify(body).length;
    const ctx = {
      endpoint: "responses", body, headers: { "content-length": String(chars) }, attempts: [{ provider: "up", model: "m/x", status: 200, latencyMs: 1 }],
      targets: [{ provider: "up", modelId: "m/x", upstreamModel: "x", pricing: {} }], usage: { inputTokens: 1000, outputTokens: 50 },
      modelTurns: turns, turnUsages, response: { kind: "stream", status: 200, events: [] }, config: { raw: {} },
      requestId: "req_cut", gateway: { log: { warn: () => {} } },
    } as unknown as GatewayContext;
    return { usage: new Meter(ctx).finalUsage({ status: 200, aborted: true })!.usage, estimate: Math.ceil(chars / 3) };
  }

  it("the cut turn's prompt is billed, estimated, besides the earlier turns' reported input", () => {
    const { usage, estimate } = cut(2, [{ inputTokens: 1000, outputTokens: 50 }]);
    expect(usage.inputTokens).toBe(1000 + estimate);
  });

  it("a later turn that failed on every endpoint (mcp-loop.ts leaves it out of modelTurns) adds no estimate", () => {
    expect(cut(1, [{ inputTokens: 1000, outputTokens: 50 }]).usage.inputTokens).toBe(1000);
  });

  it("every turn reported its usage before the cut: their input as reported", () => {
    const { usage } = cut(2, [{ inputTokens: 600, outputTokens: 25 }, { inputTokens: 400, outputTokens: 25 }]);
    expect(usage.inputTokens).toBe(1000);
  });
});

describe("Meter.finalUsage of a stream that failed after its output", () => {
  // The upstream reported 10 in, 1 out (Anthropic's message_start, or a Responses response.failed carrying its own
  // final usage); the client was relayed far more text than one token's.
  function failed(streamError: GatewayError) {
    const ctx = {
      endpoint: "messages", body: { model: "m/x", messages: [] }, headers: {}, attempts: [{ provider: "up", model: "m/x", status: 400, latencyMs: 1 }],
      targets: [{ provider: "up", modelId: "m/x", upstreamModel: "x", pricing: {} }], usage: { inputTokens: 10, outputTokens: 1 },
      response: { kind: "stream", status: 200, events: [] }, config: { raw: {} }, requestId: "req_failed", gateway: { log: { warn: () => {} } },
    } as unknown as GatewayContext;
    const meter = new Meter(ctx);
    meter.relayed({ event: "content_block_delta", data: JSON.stringify({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "word ".repeat(200) } }) });
    return meter.finalUsage({ status: 200, aborted: false, streamError })!;
  }
  const refused = () => new GatewayError(400, "INVALID_REQUEST", "Provider up rejected the request: prompt is too long");

  it("a partial count (message_start's) is topped up with the estimate of the text relayed", () => {
    const billed = failed(refused());
    expect(billed.estimated).toBe(true);
    expect(billed.usage.outputTokens).toBeGreaterThan(100);
  });

  it("the usage the upstream's terminal event reported is billed as reported, as an ok stream's is", () => {
    expect(failed(afterTerminalUsage(refused()))).toEqual({ usage: { inputTokens: 10, outputTokens: 1 }, estimated: false });
  });
});

describe("Meter.finalUsage of a stream whose text a stage held back", () => {
  // A chat stream through an output rule's window: the upstream sent two words, the client got the role chunk and
  // empty deltas (the words still held) when the client left.
  it("bills the words the upstream generated, not the empty deltas the client got", () => {
    const ctx = {
      endpoint: "chat", body: { model: "m/x", messages: [] }, headers: {}, attempts: [{ provider: "up", model: "m/x", status: 200, latencyMs: 1 }],
      targets: [{ provider: "up", modelId: "m/x", upstreamModel: "x", pricing: {} }],
      response: { kind: "stream", status: 200, events: [] }, config: { raw: {} }, requestId: "req_held_back", gateway: { log: { warn: () => {} } },
    } as unknown as GatewayContext;
    const meter = new Meter(ctx);
    const delta = (content: string) => ({ data: JSON.stringify({ choices: [{ index: 0, delta: { content }, finish_reason: null }] }) });
    for (const w of ["Hello", " there"]) meter.generated(delta(w));
    for (let i = 0; i < 2; i++) meter.relayed(delta(""));
    expect(meter.finalUsage({ status: 200, aborted: true })!.usage.outputTokens).toBe(2);
  });
});
