// dispatch's retry walk with a fake context and driver: which error decides the wait before an endpoint is asked again.
import { describe, expect, it, vi } from "vitest";
import { Registry } from "prom-client";
import { dispatch, type RetryInfo } from "./dispatch.ts";
import { clientClosed, GatewayError } from "./errors.ts";
import { timeLimitError } from "./time-limit-cut.ts";
import type { GatewayContext } from "./pipeline/context.ts";
import type { CallOptions, ProviderDriver, Target } from "./contracts/provider.ts";

type Script = Record<string, Array<(call: CallOptions) => Promise<unknown>>>;

const limited = (provider: string, seconds: number) =>
  new GatewayError(502, "UPSTREAM_ERROR", `${provider}: slow down`, { retryable: true, retryAfter: seconds, details: { provider, upstream_status: 429 } });
const broken = (provider: string) => new GatewayError(502, "UPSTREAM_ERROR", `${provider}: boom`, { retryable: true, details: { provider, upstream_status: 500 } });
const answer = { kind: "json", status: 200, body: { choices: [] } };

/** A context whose targets (sandbox: no circuit breaker in the way) call `script[provider]` in turn; every call is logged. */
function setup(providers: string[], script: Script, maxAttempts: number, retryDelay: (err: GatewayError, attempt: number, next: RetryInfo) => number | null) {
  const calls: Array<{ provider: string; at: number }> = [];
  const driver = (name: string) => ({
    name,
    protocol: "openai",
    chat: (_body: unknown, _target: Target, call: CallOptions) => {
      calls.push({ provider: name, at: performance.now() });
      const next = script[name]!.shift();
      return next ? next(call) : Promise.resolve(answer);
    },
  }) as unknown as ProviderDriver;
  const targets: Target[] = providers.map((p) => ({ modelId: "t/m", provider: p, upstreamModel: p, pricing: {} as Target["pricing"], sandbox: true }));
  const warned: unknown[] = [];
  const gateway = { metrics: { registry: new Registry(), upstream: { observe() {} } }, config: { store: { kind: "memory" } }, startConfig: { store: { kind: "memory" } }, onClose() {}, draining: false, log: { warn: (...a: unknown[]) => warned.push(a) } };
  const ctx = {
    requestId: "r", generationId: "g", startedAt: performance.now(), signal: new AbortController().signal, headers: {}, body: {},
    targets, maxAttempts, retryDelay, attempts: [], responseHeaders: {}, drivers: new Map(providers.map((p) => [p, driver(p)])),
    gateway, config: { models: new Map() },
  } as unknown as GatewayContext;
  return { ctx, calls, targets, warned };
}

describe("dispatch: a second pass waits on each endpoint's own failure", () => {
  it("an endpoint whose own Retry-After is past the policy's maximum is not asked again, though another endpoint failed last without one", async () => {
    const seen: Array<[string, boolean]> = [];
    const { ctx, calls } = setup(["a", "b"], {
      a: [() => Promise.reject(limited("a", 30))],
      b: [() => Promise.reject(broken("b")), () => Promise.reject(broken("b"))],
    }, 3, (err, _n, next) => {
      seen.push([err.message, next.sameEndpoint]);
      if (!next.sameEndpoint) return 0;
      return err.retryAfter === undefined ? 10 : err.retryAfter > 10 ? null : err.retryAfter * 1000;
    });
    await expect(dispatch(ctx, "chat")).rejects.toMatchObject({ status: 502, retryAfter: expect.closeTo(30, 0) }); // less the moments since
    expect(calls.map((c) => c.provider)).toEqual(["a", "b", "b"]);
    // a's retry was judged on a's own 429, b's on b's own 500.
    expect(seen).toEqual([["a: slow down", false], ["a: slow down", true], ["b: boom", true]]);
  });

  it("a shorter Retry-After is waited for, counted from that endpoint's own failure", async () => {
    const { ctx, calls } = setup(["a", "b"], {
      a: [() => Promise.reject(limited("a", 0.3))],
      b: [() => new Promise((_, reject) => setTimeout(() => reject(broken("b")), 150))],
    }, 3, (err, _n, next) => (next.sameEndpoint ? (err.retryAfter ?? 0) * 1000 : 0));
    await dispatch(ctx, "chat");
    expect(calls.map((c) => c.provider)).toEqual(["a", "b", "a"]);
    const gap = calls[2]!.at - calls[0]!.at;
    expect(gap).toBeGreaterThanOrEqual(295); // never before a's Retry-After
    expect(gap).toBeLessThan(420); // b's 150 ms count towards it: not 300 ms more after b failed
  });
});

describe("dispatch: a provider the config does not have", () => {
  it("is a fault of that endpoint's configuration: the next endpoint serves the request", async () => {
    const { ctx, calls } = setup(["a", "b"], { a: [], b: [] }, 3, () => 0);
    (ctx.drivers as Map<string, unknown>).delete("a");
    await dispatch(ctx, "chat");
    expect(calls.map((c: { provider: string }) => c.provider)).toEqual(["b"]);
    expect(ctx.resolvedProvider).toBe("b");
  });

  it("when no endpoint serves, the client is told not to retry, and the endpoint is not asked again", async () => {
    const { ctx, calls } = setup(["a"], { a: [] }, 3, () => 0);
    (ctx.drivers as Map<string, unknown>).delete("a");
    const err = await dispatch(ctx, "chat").catch((e) => e);
    expect(err).toMatchObject({ status: 502, retryable: false, headers: { "x-should-retry": "false" }, details: { provider: "a", reason: "not_configured" } });
    expect(calls).toEqual([]);
    expect(ctx.attempts).toHaveLength(1);
  });
});

describe("dispatch: endpoint faults and other non-retryable failures", () => {
  const fault = (provider: string, upstream_status: number, reason?: string) =>
    new GatewayError(502, "UPSTREAM_ERROR", `${provider}: ${upstream_status}`, { retryable: false, headers: { "x-should-retry": "false" }, details: { provider, upstream_status, ...(reason ? { reason } : {}) } });

  it("a 404 for the configured model is not asked again, the next endpoint serves at once", async () => {
    const { ctx, calls } = setup(["a", "b"], { a: [() => Promise.reject(fault("a", 404, "upstream_not_found"))], b: [] }, 3, () => 0);
    await dispatch(ctx, "chat");
    expect(calls.map((c) => c.provider)).toEqual(["a", "b"]);
  });

  it("alone, the same 404 is one attempt and tells the client not to retry", async () => {
    const { ctx, calls } = setup(["a"], { a: [() => Promise.reject(fault("a", 404, "upstream_not_found"))] }, 3, () => 0);
    await expect(dispatch(ctx, "chat")).rejects.toMatchObject({ status: 502, headers: { "x-should-retry": "false" } });
    expect(calls.map((c) => c.provider)).toEqual(["a"]);
  });

  it("a content refusal is final: no other provider is asked to generate what one refused", async () => {
    const { ctx, calls } = setup(["a", "b"], { a: [() => Promise.reject(fault("a", 200, "content_filter"))], b: [] }, 3, () => 0);
    await expect(dispatch(ctx, "chat")).rejects.toMatchObject({ status: 502, details: { reason: "content_filter" } });
    expect(calls.map((c) => c.provider)).toEqual(["a"]);
  });
});

describe("dispatch: other 4xx about the endpoint", () => {
  it("a 402 (the provider account out of credit) gives that endpoint up; the next one serves", async () => {
    const err = new GatewayError(502, "UPSTREAM_ERROR", "a: 402", { retryable: false, headers: { "x-should-retry": "false" }, details: { provider: "a", upstream_status: 402 } });
    const { ctx, calls } = setup(["a", "b"], { a: [() => Promise.reject(err)], b: [] }, 3, () => 0);
    await dispatch(ctx, "chat");
    expect(calls.map((c) => c.provider)).toEqual(["a", "b"]);
  });
});

describe("dispatch: an upstream account out of credit (OpenAI's 429 insufficient_quota)", () => {
  // As providers/http.ts (or a Responses stream's error event) makes it: a 429, but no rate limit.
  const noCredit = (provider: string) =>
    new GatewayError(502, "UPSTREAM_ERROR", `${provider}: quota`, { retryable: false, headers: { "x-should-retry": "false" }, details: { provider, upstream_status: 429, reason: "out_of_credit" } });
  const failingStream = (err: GatewayError) => Promise.resolve({ kind: "stream", events: { [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(err) }) } });

  it("gives that endpoint up: the next one serves, and gets the retry", async () => {
    const { ctx, calls, warned } = setup(["nocredit", "b"], { nocredit: [() => Promise.reject(noCredit("nocredit")), () => Promise.reject(noCredit("nocredit"))], b: [() => Promise.reject(broken("b"))] }, 3, () => 0);
    await dispatch(ctx, "chat");
    expect(calls.map((c) => c.provider)).toEqual(["nocredit", "b", "b"]);
    // The operator is told what to do about it: not a configuration to fix.
    expect(String((warned[0] as unknown[])[0])).toContain("out of credit or over its spending cap");
  });

  for (const how of ["a JSON call", "a stream's first event"] as const) {
    it(`alone (${how}): one attempt, and the client is told not to retry`, async () => {
      const fails = () => (how === "a JSON call" ? Promise.reject(noCredit("a")) : failingStream(noCredit("a")));
      const { ctx, calls } = setup(["a"], { a: [fails, fails] }, 3, () => 0);
      const err = await dispatch(ctx, "chat").catch((e) => e);
      expect(calls.map((c) => c.provider)).toEqual(["a"]);
      expect(err).toMatchObject({ status: 502, headers: { "x-should-retry": "false" }, retryAfter: undefined, details: { reason: "out_of_credit" } });
    });
  }
});

describe("dispatch: an endpoint given up for its configuration", () => {
  const refused = (provider: string) =>
    new GatewayError(502, "UPSTREAM_ERROR", `${provider}: 401`, { retryable: false, headers: { "x-should-retry": "false" }, details: { provider, upstream_status: 401 } });

  it("uses none of the retry budget: the healthy endpoint still gets its retry", async () => {
    const { ctx, calls } = setup(["a", "b"], { a: [() => Promise.reject(refused("a"))], b: [() => Promise.reject(broken("b"))] }, 2, () => 0);
    await dispatch(ctx, "chat");
    expect(calls.map((c) => c.provider)).toEqual(["a", "b", "b"]);
  });

  it("is logged for the operator, at most once a minute per provider and reason", async () => {
    const one = setup(["w", "b"], { w: [() => Promise.reject(refused("w"))], b: [] }, 3, () => 0);
    await dispatch(one.ctx, "chat");
    const two = setup(["w", "b"], { w: [() => Promise.reject(refused("w"))], b: [] }, 3, () => 0);
    await dispatch(two.ctx, "chat");
    expect(one.warned).toHaveLength(1);
    expect(JSON.stringify(one.warned[0])).toContain('"provider":"w"');
    expect(two.warned).toHaveLength(0);
  });

  it("a project's own key (BYOK) refused is final: the request is not served on the operator's endpoint", async () => {
    const { ctx, calls, targets } = setup(["a", "b"], { a: [() => Promise.reject(refused("a"))], b: [] }, 3, () => 0);
    targets[0]!.credentials = { apiKey: "sk-tenant" };
    await expect(dispatch(ctx, "chat")).rejects.toMatchObject({ status: 502, headers: { "x-should-retry": "false" } });
    expect(calls.map((c) => c.provider)).toEqual(["a"]);
  });
});

describe("dispatch: an answer past the gateway's size bounds", () => {
  // As providers/http.ts sends them: the same request would be as large, so it is no retry's business.
  const tooLarge = (provider: string, reason: "answer_too_large" | "event_too_large") =>
    new GatewayError(502, "UPSTREAM_ERROR", `${provider}: too large`, { retryable: false, headers: { "x-should-retry": "false" }, details: { provider, reason, limit_bytes: 1024, setting: "server.upstream_limits.answer_bytes" } });
  /** A stream result whose first event fails with `err` (an event past the bound is found while reading it). */
  const failingStream = (err: GatewayError) => Promise.resolve({
    kind: "stream",
    events: { [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(err) }) },
  });

  for (const reason of ["answer_too_large", "event_too_large"] as const) {
    const fails = (p: string) => (reason === "answer_too_large" ? Promise.reject(tooLarge(p, reason)) : failingStream(tooLarge(p, reason)));

    it(`${reason}: a lone endpoint is asked once, and the client is told not to retry (no Retry-After)`, async () => {
      const { ctx, calls } = setup(["a"], { a: [() => fails("a"), () => fails("a")] }, 3, () => 0);
      const err = await dispatch(ctx, "chat").catch((e) => e);
      expect(calls.map((c) => c.provider)).toEqual(["a"]);
      expect(err).toMatchObject({ status: 502, code: "UPSTREAM_ERROR", headers: { "x-should-retry": "false" }, retryAfter: undefined, details: { reason, attempts: [{ provider: "a", status: 502 }] } });
    });

    it(`${reason}: the next endpoint serves at once, and still gets its own retry; the first is not asked again`, async () => {
      const { ctx, calls } = setup(["a", "b"], { a: [() => fails("a"), () => fails("a")], b: [() => Promise.reject(broken("b"))] }, 2, () => 0);
      await dispatch(ctx, "chat");
      expect(calls.map((c) => c.provider)).toEqual(["a", "b", "b"]);
      expect(ctx.resolvedProvider).toBe("b");
    });

    it(`${reason}: told to the operator as an answer past the bounds, not as a configuration that fails`, async () => {
      const { ctx, warned } = setup([`big-${reason}`, "b"], { [`big-${reason}`]: [() => fails(`big-${reason}`)], b: [] }, 3, () => 0);
      await dispatch(ctx, "chat");
      expect(warned).toHaveLength(1);
      expect(String((warned[0] as unknown[])[0])).toContain("past the gateway's bounds");
    });
  }
});

describe("dispatch: a stream whose first event is the upstream's error about the request", () => {
  // As a decoder makes an in-band 400 (Anthropic's invalid_request_error, Gemini's INVALID_ARGUMENT, Bedrock's
  // validationException...): the same request fails the same way on every endpoint.
  const refusedRequest = (provider: string) =>
    new GatewayError(400, "INVALID_REQUEST", `Provider ${provider} rejected the request: prompt is too long`, { retryable: false, headers: { "x-should-retry": "false" }, details: { provider, upstream_status: 400 } });
  const failingStream = (err: GatewayError) => Promise.resolve({ kind: "stream", events: { [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(err) }) } });

  it("is the client's 400 after one call: not retried, no fallback, x-should-retry: false", async () => {
    const { ctx, calls } = setup(["a", "b"], { a: [() => failingStream(refusedRequest("a")), () => failingStream(refusedRequest("a"))], b: [] }, 3, () => 0);
    const err = await dispatch(ctx, "chat").catch((e) => e);
    expect(calls.map((c) => c.provider)).toEqual(["a"]);
    expect(err).toMatchObject({ status: 400, code: "INVALID_REQUEST", retryable: false, headers: { "x-should-retry": "false" } });
    expect(ctx.resolvedProvider).toBeUndefined();
  });

  it("a transient one (overloaded) still goes to the next endpoint", async () => {
    const { ctx, calls } = setup(["a", "b"], { a: [() => failingStream(broken("a"))], b: [] }, 3, () => 0);
    await dispatch(ctx, "chat");
    expect(calls.map((c) => c.provider)).toEqual(["a", "b"]);
    expect(ctx.resolvedProvider).toBe("b");
  });
});

describe("dispatch: a stream whose upstream began answering while a translator held it all back", () => {
  // A Gemini client's function call goes out whole: the upstream's tool-call deltas reach no client event, and the
  // upstream cuts the stream midway through the arguments.
  const cutMidCall = (usage?: { inputTokens: number; outputTokens: number }) => (call: CallOptions) =>
    Promise.resolve({ kind: "stream", events: { [Symbol.asyncIterator]: () => ({ next: () => {
      if (usage) call.reportUsage(usage);
      call.reportFirstToken();
      return Promise.reject(broken("a"));
    } }) } });

  it("is final: one call, no other endpoint, the upstream's error for the client", async () => {
    const { ctx, calls } = setup(["a", "b"], { a: [cutMidCall(), cutMidCall()], b: [] }, 3, () => 0);
    const err = await dispatch(ctx, "chat").catch((e) => e);
    expect(calls.map((c) => c.provider)).toEqual(["a"]);
    expect(err).toMatchObject({ status: 502, code: "UPSTREAM_ERROR", message: "a: boom" });
    expect(ctx.attempts).toMatchObject([{ provider: "a", status: 502, errorCode: "UPSTREAM_ERROR" }]);
  });

  it("is billed: what the upstream reported, else zeros the meter estimates the input for", async () => {
    const reported = setup(["a"], { a: [cutMidCall({ inputTokens: 905, outputTokens: 1 })] }, 2, () => 0);
    await dispatch(reported.ctx, "chat").catch(() => {});
    expect(reported.calls).toHaveLength(1);
    expect(reported.ctx.usage).toEqual({ inputTokens: 905, outputTokens: 1 });
    const silent = setup(["a"], { a: [cutMidCall()] }, 2, () => 0);
    await dispatch(silent.ctx, "chat").catch(() => {});
    expect(silent.ctx.usage).toEqual({ inputTokens: 0, outputTokens: 0 });
  });
});

describe("dispatch: a stream that breaks after its first event", () => {
  it("records the attempt's latency until the failure (what the client waited), not until the first event", async () => {
    let clock = 1000; // the gateway's clock, moved by the fake upstream: no real time is measured
    const now = vi.spyOn(performance, "now").mockImplementation(() => clock);
    try {
      async function* events() {
        clock += 2;
        yield { data: "{}" };
        clock += 336; // the stream runs on, then its connection drops
        throw broken("a");
      }
      const finished: Array<() => void> = [];
      const { ctx } = setup(["a"], { a: [() => Promise.resolve({ kind: "stream", status: 200, events: events() })] }, 1, () => 0);
      Object.assign(ctx, { onFinish: (fn: () => void) => finished.push(fn) });
      const observed: Array<[string, number]> = [];
      ctx.gateway.metrics.upstream.observe = ((labels: { outcome: string }, seconds: number) => observed.push([labels.outcome, seconds])) as never;
      await dispatch(ctx, "chat");
      const response = ctx.response as { kind: "stream"; events: AsyncIterable<unknown> };
      const read = async () => {
        for await (const _ of response.events) void _;
      };
      await expect(read()).rejects.toMatchObject({ code: "UPSTREAM_ERROR" });
      expect(ctx.attempts).toEqual([{ model: "t/m", provider: "a", status: 502, errorCode: "UPSTREAM_ERROR", latencyMs: 338 }]);
      // gateway_upstream_duration_seconds, observed as the request finishes, times the attempt the same.
      for (const fn of finished) fn();
      expect(observed).toEqual([["error", expect.closeTo(0.338, 6)]]);
    } finally {
      now.mockRestore();
    }
  });

  it("refused by the upstream for the client's own request (an in-band 400 after output) is a client_error on the dashboard, not a failure", async () => {
    async function* events() {
      yield { data: "{}" };
      throw new GatewayError(400, "INVALID_REQUEST", "Provider a rejected the request: prompt is too long", { headers: { "x-should-retry": "false" }, details: { provider: "a", upstream_status: 400 } });
    }
    const finished: Array<() => void> = [];
    const { ctx } = setup(["a"], { a: [() => Promise.resolve({ kind: "stream", status: 200, events: events() })] }, 1, () => 0);
    Object.assign(ctx, { onFinish: (fn: () => void) => finished.push(fn) });
    const outcomes: string[] = [];
    ctx.gateway.metrics.upstream.observe = ((labels: { outcome: string }) => outcomes.push(labels.outcome)) as never;
    await dispatch(ctx, "chat");
    const read = async () => {
      for await (const _ of (ctx.response as { events: AsyncIterable<unknown> }).events) void _;
    };
    await expect(read()).rejects.toMatchObject({ code: "INVALID_REQUEST" });
    for (const fn of finished) fn();
    expect(outcomes).toEqual(["client_error"]);
  });

  it("a stream the client left after its first event is CANCELLED, timed until it left", async () => {
    let clock = 1000;
    const now = vi.spyOn(performance, "now").mockImplementation(() => clock);
    try {
      async function* events() {
        clock += 2;
        yield { data: "{}" };
        yield { data: "{}" };
      }
      const { ctx } = setup(["a"], { a: [() => Promise.resolve({ kind: "stream", status: 200, events: events() })] }, 1, () => 0);
      const client = new AbortController();
      Object.assign(ctx, { onFinish: () => {}, signal: client.signal });
      await dispatch(ctx, "chat");
      const stream = (ctx.response as unknown as { events: AsyncIterableIterator<unknown> }).events;
      await stream.next();
      clock += 120;
      client.abort();
      await stream.return!();
      expect(ctx.attempts).toEqual([{ model: "t/m", provider: "a", status: 499, errorCode: "CANCELLED", latencyMs: 122 }]);
    } finally {
      now.mockRestore();
    }
  });

  it("a stream that ends well keeps the time to its first event", async () => {
    let clock = 1000;
    const now = vi.spyOn(performance, "now").mockImplementation(() => clock);
    try {
      async function* events() {
        clock += 2;
        yield { data: "{}" };
        clock += 336;
      }
      const { ctx } = setup(["a"], { a: [() => Promise.resolve({ kind: "stream", status: 200, events: events() })] }, 1, () => 0);
      Object.assign(ctx, { onFinish: () => {} });
      await dispatch(ctx, "chat");
      for await (const _ of (ctx.response as { events: AsyncIterable<unknown> }).events) void _;
      expect(ctx.attempts).toEqual([{ model: "t/m", provider: "a", status: 200, latencyMs: 2 }]);
    } finally {
      now.mockRestore();
    }
  });
});

describe("dispatch: an attempt cut by the request's own time limit", () => {
  /** A driver that answers only when its signal aborts, with the client's 499 as the HTTP drivers do (providers/http.ts). */
  const hanging = (signal: AbortSignal) => () => new Promise<never>((_, reject) => signal.addEventListener("abort", () => reject(clientClosed()), { once: true }));

  for (const [cut, attempt, outcome] of [
    ["the time limit (an image's hold)", { status: 504, errorCode: "UPSTREAM_TIMEOUT" }, "error"],
    ["the client leaving", { status: 499, errorCode: "CANCELLED" }, "cancelled"],
  ] as const) {
    it(`by ${cut}: the attempt is ${attempt.status} ${attempt.errorCode}, ${outcome} on the dashboard`, async () => {
      const controller = new AbortController();
      const { ctx } = setup(["a"], { a: [hanging(controller.signal)] }, 1, () => 0);
      Object.assign(ctx, { signal: controller.signal });
      const outcomes: string[] = [];
      ctx.gateway.metrics.upstream.observe = ((labels: { outcome: string }) => outcomes.push(labels.outcome)) as never;
      const done = dispatch(ctx, "chat");
      const limit = timeLimitError(new GatewayError(504, "UPSTREAM_TIMEOUT", "Image generation on t/m did not finish within 300 s", { retryable: true }));
      controller.abort(attempt.status === 504 ? limit : undefined);
      await expect(done).rejects.toBeInstanceOf(GatewayError);
      expect(ctx.attempts).toEqual([expect.objectContaining({ model: "t/m", provider: "a", ...attempt })]);
      expect(outcomes).toEqual([outcome]);
    });
  }
});
