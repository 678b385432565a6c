// The primary's log when workers started in place of dead ones cannot start: one line per reason and count serving,
// so the last line always says how many workers serve (a second worker lost to the same reason is said too).
import { afterEach, describe, expect, it, vi } from "vitest";
import { EventEmitter } from "node:events";
import type { Logger } from "./log.ts";

/** node:cluster as the primary uses it: fork() makes a worker the test drives; "exit" is the test's to emit. */
const fake = vi.hoisted(() => {
  const { EventEmitter } = require("node:events") as typeof import("node:events");
  const cluster = Object.assign(new EventEmitter(), {
    isWorker: false,
    workers: {} as Record<number, unknown>,
    forked: [] as any[],
    fork() {
      const w = Object.assign(new EventEmitter(), {
        id: cluster.forked.length + 1, process: { pid: 1000 + cluster.forked.length + 1, kill() {} },
        isConnected: () => true, send: () => true,
      });
      cluster.forked.push(w);
      cluster.workers[w.id] = w;
      return w;
    },
  });
  return cluster;
});
vi.mock("node:cluster", () => ({ default: fake }));

const { runPrimary } = await import("./cluster.ts");

afterEach(() => {
  vi.useRealTimers();
  for (const s of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.removeAllListeners(s);
});

describe("runPrimary: replacements that cannot start", () => {
  it("says so again when a second worker is lost to the same reason: 2 of 3, then 1 of 3", async () => {
    vi.useFakeTimers();
    const log = { info: vi.fn(), warn: vi.fn(), error: vi.fn() } as unknown as Logger & { error: ReturnType<typeof vi.fn> };
    void runPrimary({ workers: 3, log, onReady() {} });
    const listen = (w: EventEmitter) => w.emit("message", { mg: "listening", url: "http://127.0.0.1:1", port: 1, texts: {}, restartPending: [] });
    const die = (w: any) => {
      delete fake.workers[w.id];
      fake.emit("exit", w, null, "SIGKILL");
    };
    /** The next replacement says why it cannot start and exits; the backoff before it is run through. */
    const replacementFails = async () => {
      const before = fake.forked.length;
      await vi.advanceTimersByTimeAsync(60_000);
      const w = fake.forked[before]!;
      expect(w).toBeDefined();
      w.emit("message", { mg: "start-failed", reason: "cannot load plugin tagger" });
      delete fake.workers[w.id];
      fake.emit("exit", w, 1, null);
    };
    const [w1, , w3] = fake.forked;
    for (const w of fake.forked) listen(w);

    die(w1);
    await replacementFails();
    await replacementFails(); // the same reason, the same 2 of 3: not said again
    die(w3);
    await replacementFails();
    await replacementFails();

    const lines = log.error.mock.calls.filter(([msg]) => String(msg).includes("cannot start"));
    expect(lines.map(([msg]) => String(msg).match(/serving with (\d of \d)/)![1])).toEqual(["2 of 3", "1 of 3"]);
    expect(lines.map(([, f]) => f.reason)).toEqual(["cannot load plugin tagger", "cannot load plugin tagger"]);
  });
});
