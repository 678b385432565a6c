import { describe, expect, it, vi } from "vitest";
import type { Worker } from "node:cluster";
import { availableParallelism } from "node:os";
import { EventEmitter } from "node:events";
import { carriedConfig, MetricsGatherer, parseWorkers, storeRefusal, tellPrimaryStartFailed, workerEnv, type PrimaryChannel } from "./cluster.ts";
import type { Logger } from "./log.ts";
import type { Metrics } from "./metrics.ts";
import { TrafficSampler, type WireReading } from "./admin/traffic-sampler.ts";

describe("--workers", () => {
  it("defaults to 1, takes a count or auto (one per core), refuses anything else", () => {
    expect(parseWorkers(undefined)).toBe(1);
    expect(parseWorkers("3")).toBe(3);
    expect(parseWorkers("auto")).toBe(availableParallelism());
    for (const bad of ["0", "-1", "1.5", "two", ""]) expect(() => parseWorkers(bad)).toThrow(/--workers must be/);
  });

  it("more than one worker needs the Redis store", () => {
    expect(storeRefusal("sqlite", 1)).toBeUndefined();
    expect(storeRefusal("redis", 4)).toBeUndefined();
    expect(storeRefusal("sqlite", 2)).toMatch(/--workers 2 needs store: \{ kind: redis \}/);
    expect(storeRefusal("memory", 2)).toMatch(/the memory store keeps/);
    // No store: section: the operator is told the default they are on, not just a kind they never wrote.
    expect(storeRefusal("sqlite", 2, true)).toMatch(/with no store: section the config runs on the sqlite store, which keeps rate-limit windows/);
  });

  it("workers get two malloc arenas unless the operator set MALLOC_ARENA_MAX, and the primary's signing secret", () => {
    expect(workerEnv("s".repeat(64), {})).toEqual({ MG_WORKER: "1", MALLOC_ARENA_MAX: "2", MG_WORKER_SIGNING_SECRET: "s".repeat(64) });
    expect(workerEnv("s".repeat(64), { MALLOC_ARENA_MAX: "8" })).toMatchObject({ MALLOC_ARENA_MAX: "8" });
  });
});

describe("MetricsGatherer (the primary's side of a scrape)", () => {
  /** A worker as the primary sees it: what was sent to it, and whether its channel is open. */
  function fakeWorker(id: number, connected = true) {
    const sent: any[] = [];
    return { id, sent, isConnected: () => connected, send: (m: unknown, cb?: () => void) => { sent.push(m); cb?.(); return true; } } as unknown as Worker & { sent: any[] };
  }
  const counter = (value: number) => [{ name: "gateway_requests_total", help: "h", type: "counter", aggregator: "sum", values: [{ value, labels: { endpoint: "chat" } }] }];
  const gauge = (value: number) => [{ name: "gateway_store_up", help: "h", type: "gauge", aggregator: "min", values: [{ value, labels: {} }] }];
  const log = () => ({ warn: vi.fn() }) as unknown as Logger & { warn: ReturnType<typeof vi.fn> };
  const answered = async (w: { sent: any[] }) => {
    for (let i = 0; i < 100 && !w.sent.some((m) => m.mg === "metrics-text"); i++) await new Promise((r) => setTimeout(r, 5));
    return w.sent.find((m) => m.mg === "metrics-text");
  };

  it("asks every connected worker, adds their metrics up by each metric's aggregator, and answers the asker", async () => {
    const [a, b, gone] = [fakeWorker(1), fakeWorker(2), fakeWorker(3, false)];
    const g = new MetricsGatherer(() => [a, b, gone], log());
    g.gather(a, 7);
    expect(a.sent).toEqual([{ mg: "metrics-part", id: 0 }]);
    expect(gone.sent).toEqual([]);
    g.part(a, { id: 0, metrics: [...counter(3), ...gauge(1)] });
    g.part(b, { id: 0, metrics: [...counter(4), ...gauge(0)] });
    const text = (await answered(a)) as { id: number; text: string };
    expect(text.id).toBe(7);
    expect(text.text).toContain('gateway_requests_total{endpoint="chat"} 7');
    expect(text.text).toContain("gateway_store_up 0");
  });

  it("leaves out a worker that does not answer in time, with a warning, and fails when none answers", async () => {
    const [a, b] = [fakeWorker(1), fakeWorker(2)];
    const l = log();
    const g = new MetricsGatherer(() => [a, b], l, 20);
    g.gather(b, 1);
    g.part(a, { id: 0, metrics: counter(5) });
    const partial = await answered(b);
    expect(partial.text).toContain('gateway_requests_total{endpoint="chat"} 5');
    expect(l.warn).toHaveBeenCalledWith(expect.stringMatching(/without some workers/), { missing: [2] });
    g.part(b, { id: 0, metrics: counter(1) }); // too late: ignored

    const lone = fakeWorker(3);
    const none = new MetricsGatherer(() => [lone], log(), 20);
    none.gather(lone, 9);
    expect(await answered(lone)).toMatchObject({ mg: "metrics-text", id: 9, error: expect.stringMatching(/no worker answered/) });
  });

  it("a worker that stops answering (paused, busy) counts with its last answer: the cluster's counters never go down", async () => {
    const [a, b] = [fakeWorker(1), fakeWorker(2)];
    const l = log();
    const g = new MetricsGatherer(() => [a, b], l, 20);
    g.gather(a, 1);
    g.part(a, { id: 0, metrics: counter(40) });
    g.part(b, { id: 0, metrics: counter(51) });
    expect((await answered(a)).text).toContain('gateway_requests_total{endpoint="chat"} 91');
    a.sent.length = 0;
    g.gather(a, 2); // b is stopped (SIGSTOP): no answer
    g.part(a, { id: 1, metrics: counter(42) });
    expect((await answered(a)).text).toContain('gateway_requests_total{endpoint="chat"} 93');
    expect(l.warn).toHaveBeenCalledWith(expect.stringMatching(/last answered metrics stand in/), { missing: [2], lastAnswerUsed: [2] });
    a.sent.length = 0;
    g.gather(a, 3); // b answers again
    g.part(a, { id: 2, metrics: counter(42) });
    g.part(b, { id: 2, metrics: counter(52) });
    expect((await answered(a)).text).toContain('gateway_requests_total{endpoint="chat"} 94');
  });

  it("a dead worker's counters and histograms stay in every later sum (its gauges go); its replacement adds from zero", async () => {
    const histogram = (count: number) => [{
      name: "gateway_request_duration_seconds", help: "h", type: "histogram", aggregator: "sum", values: [
        { metricName: "gateway_request_duration_seconds_bucket", labels: { le: 1 }, value: count },
        { metricName: "gateway_request_duration_seconds_bucket", labels: { le: "+Inf" }, value: count },
        { metricName: "gateway_request_duration_seconds_sum", labels: {}, value: count / 10 },
        { metricName: "gateway_request_duration_seconds_count", labels: {}, value: count },
      ],
    }];
    const open = (value: number) => [{ name: "gateway_open_streams", help: "h", type: "gauge", aggregator: "sum", values: [{ value, labels: {} }] }];
    const live = [fakeWorker(1), fakeWorker(2)];
    const [a, b] = live;
    const g = new MetricsGatherer(() => live, log(), 20);
    const scrape = async (id: number, parts: Map<Worker, unknown[]>) => {
      a!.sent.length = 0;
      g.gather(a!, id);
      const asked = a!.sent.find((m) => m.mg === "metrics-part").id;
      for (const [w, metrics] of parts) g.part(w, { id: asked, metrics });
      return ((await answered(a!)) as { text: string }).text;
    };
    let text = await scrape(1, new Map([[a!, [...counter(50), ...histogram(50), ...open(1)]], [b!, [...counter(51), ...histogram(51), ...open(2)]]]));
    expect(text).toContain('gateway_requests_total{endpoint="chat"} 101');

    // kill -9 b: the primary sees it exit and starts c, which counts from zero.
    live.splice(1, 1);
    g.retire(b!);
    const c = fakeWorker(3);
    live.push(c);
    text = await scrape(2, new Map([[a!, [...counter(50), ...histogram(50), ...open(1)]], [c, [...counter(1), ...histogram(1), ...open(0)]]]));
    expect(text).toContain('gateway_requests_total{endpoint="chat"} 102');
    expect(text).toContain("gateway_request_duration_seconds_count 102");
    expect(text).toContain('gateway_request_duration_seconds_bucket{le="+Inf"} 102');
    expect(text).toContain("gateway_open_streams 1"); // b's open streams died with it

    // c dies too, after answering a scrape still waiting for a: counted once, in the retired total.
    c.sent.length = 0;
    a!.sent.length = 0;
    g.gather(a!, 3);
    const id = c.sent[0].id;
    g.part(c, { id, metrics: [...counter(7), ...histogram(7), ...open(0)] });
    live.splice(1, 1);
    g.retire(c);
    g.part(a!, { id, metrics: [...counter(60), ...histogram(60), ...open(1)] });
    text = ((await answered(a!)) as { text: string }).text;
    expect(text).toContain('gateway_requests_total{endpoint="chat"} 118'); // 51 + 7 retired, 60 live
    expect(text).toContain("gateway_request_duration_seconds_count 118");
  });

  it("a traffic gather asks for each worker's reading and hands the readings back as they came, without summing", async () => {
    const [a, b] = [fakeWorker(1), fakeWorker(2)];
    const g = new MetricsGatherer(() => [a, b], log());
    g.gather(b, 4, true);
    expect(a.sent).toEqual([{ mg: "metrics-part", id: 0, traffic: true }]);
    g.part(a, { id: 0, metrics: [{ ok: 3 }] });
    g.part(b, { id: 0, metrics: [{ ok: 4 }] });
    expect(await answered(b)).toEqual({ mg: "metrics-text", id: 4, parts: [{ ok: 3 }, { ok: 4 }] });
  });

  it("the console's Live panel, gathered the same way, shows no step of 0 requests when a worker misses a gather or dies", async () => {
    const reading = (ok: number, inFlight = 0): WireReading => ({ ok, clientErrors: 0, serverErrors: 0, inputTokens: 0, outputTokens: 0, inFlight, duration: [], ttfb: [] });
    const live = [fakeWorker(1), fakeWorker(2)];
    const [a, b] = live;
    const g = new MetricsGatherer(() => live, log(), 20);
    /** What each worker answers to the next traffic gather (a worker left out does not answer). */
    let answers = new Map<Worker, WireReading>();
    const gather = async () => {
      a!.sent.length = 0;
      g.gather(a!, 1, true);
      const id = a!.sent.find((m) => m.mg === "metrics-part").id;
      for (const [w, r] of answers) g.part(w, { id, metrics: [r] });
      return ((await answered(a!)) as { parts: unknown[] }).parts;
    };
    let t = 0;
    const sampler = new TrafficSampler({} as Metrics, () => (t += 10_000), () => gather);
    answers = new Map([[a!, reading(40, 1)], [b!, reading(50, 2)]]);
    await sampler.sample();
    answers = new Map([[a!, reading(50, 1)]]); // b stopped (SIGSTOP): no answer
    await sampler.sample();
    answers = new Map([[a!, reading(55, 1)], [b!, reading(60, 2)]]); // b answers again
    await sampler.sample();
    live.splice(1, 1); // kill -9 b after that answer; c replaces it and counts from zero
    g.retire(b!);
    const c = fakeWorker(3);
    live.push(c);
    answers = new Map([[a!, reading(60, 1)], [c, reading(2, 0)]]);
    await sampler.sample();
    expect(sampler.points().map((p) => [p.requests, p.in_flight])).toEqual([[10, 3], [15, 3], [7, 1]]); // b's in-flight died with it
  });
});

/** A worker's channel to a primary that answers with `answer` (or never, when undefined); what the worker sent. */
function fakePrimary(answer?: (m: { mg: string }) => unknown): PrimaryChannel & { sent: unknown[] } {
  const events = new EventEmitter();
  const sent: unknown[] = [];
  return {
    connected: true, sent,
    send(m, cb) {
      sent.push(m);
      cb(null);
      const reply = answer?.(m as { mg: string });
      if (reply) setImmediate(() => events.emit("message", reply));
    },
    on: (e, fn) => events.on(e, fn),
    off: (e, fn) => events.off(e, fn),
  };
}

describe("a worker started in place of one that died asks the primary what to load", () => {
  it("gets the running gateway's config, with the others' restart_pending and refused reload", async () => {
    const carried = { started: { "/g.yaml": "a" }, accepted: { "/g.yaml": "b" }, restartPending: ["store.url"], refused: { at: "2026-01-01T00:00:00.000Z", trigger: "sighup" as const, problems: ["g.yaml:3:5: unknown field"] } };
    expect(await carriedConfig(fakePrimary(() => ({ mg: "carried", carried })), 1000)).toEqual({ carried });
    expect(await carriedConfig(fakePrimary(() => ({ mg: "carried" })), 1000)).toEqual({}); // the cluster is starting: the file
  });

  it("says so when the primary does not answer in time (the worker then warns that it read the file)", async () => {
    expect(await carriedConfig(fakePrimary(), 30)).toEqual({ unanswered: true });
  });

  it("tells the primary why it cannot start, or says it could not (no primary: it refuses to start itself)", async () => {
    const primary = fakePrimary();
    expect(await tellPrimaryStartFailed("cannot load plugin tagger", primary)).toBe(true);
    expect(primary.sent).toEqual([{ mg: "start-failed", reason: "cannot load plugin tagger" }]);
    expect(await tellPrimaryStartFailed("x", { ...primary, connected: false })).toBe(false);
  });
});
