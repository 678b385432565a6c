// A duplicate of a long request polled the store every 500 ms for as long as the first ran (on Redis two script calls
// a second per waiter, uncapped). It now backs off, 20 ms doubling to 5 s: a waiter of a 10-minute stream asks about
// 130 times instead of 1200, and its replay still follows the first's end within 5 s. The plugin's own wait loop runs
// here on a fake clock (Date.now and the sleep it awaits) against a store that says "still running" for 10 minutes.
import { afterEach, expect, it, vi } from "vitest";
import type { GatewayContext } from "../../core/pipeline/context.ts";
import type { IdempotencyBegin, Store } from "../../core/store/types.ts";

let clock = Date.UTC(2026, 10, 27, 12);
vi.mock("node:timers/promises", () => ({
  setTimeout: async (ms: number) => {
    clock += ms;
  },
}));

afterEach(() => { vi.restoreAllMocks(); });

const RUN_MS = 10 * 60_000;

it.each([
  ["a claim kept in this process (memory, SQLite)", { state: "pending", inProcess: true }],
  ["a Redis claim its live owner renews", { state: "pending", renewal: { quietMs: 0, everyMs: 10_000 } }],
] as const)("a duplicate of a 10-minute request on %s polls the store about every 5 s at most, and replays within 5 s of its end", async (_what, pending) => {
  vi.spyOn(Date, "now").mockImplementation(() => clock);
  const { default: plugin } = await import("./index.ts");
  const finishedAt = clock + RUN_MS;
  let polls = 0;
  let answeredAt: number | undefined;
  const store = {
    async idempotencyBegin(): Promise<IdempotencyBegin> {
      polls++;
      if (clock < finishedAt) return pending as IdempotencyBegin;
      answeredAt ??= clock;
      return { state: "done", response: { kind: "json", status: 200, headers: {}, body: { id: "first" } } };
    },
  } as unknown as Store;
  const ctx = {
    method: "POST", auth: { projectId: "acme", sandbox: false }, endpoint: "chat", protocol: "openai", params: {}, body: { model: "m" },
    headers: { "idempotency-key": "dup-wait" }, requestId: "r2", responseHeaders: {}, signal: new AbortController().signal,
    config: { server: { upstreamTimeoutMs: 300 } }, gateway: { store, log: { warn() {}, info() {} } },
  } as unknown as GatewayContext;
  const next = vi.fn();

  await plugin.handle(ctx, next, { state: { maxRecordBytes: 1 << 20, maxStreamRecordBytes: 1 << 20 } } as never);

  expect(next).not.toHaveBeenCalled(); // not run a second time
  expect(ctx.response).toMatchObject({ status: 200, body: { id: "first" } });
  expect(answeredAt! - finishedAt).toBeLessThanOrEqual(5_000);
  expect(polls).toBeLessThanOrEqual(RUN_MS / 5_000 + 15); // ~130; every 500 ms was 1200
});
