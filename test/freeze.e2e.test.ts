// Issue 25, items 2 and 6: one request, or one upstream, must not freeze the gateway for everyone. The gateway runs
// as shipped (its own process, SQLite, full pipeline, OTLP on); while a hostile request runs, a second client times
// its own chat completions and the gateway's event-loop delay is read from its /metrics. Before the fixes, a
// count_tokens of 128 KiB of "a" held the event loop ~10 s and a 32 MiB SSE line from an upstream 4–14 s; every
// wait must now stay under MAX_WAIT_MS (test/helpers/hostile-gateway.ts says why that figure). A JSON answer is bounded too.
// A request that is long by nature (megabytes to read and store) is held to a share of its own duration instead.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_WAIT_MS, startHostileGateway, timedWhile, type HostileGateway } from "./helpers/hostile-gateway.ts";
import { LONG_LINE_BYTES } from "./upstreams/hostile-stream.ts";

let gw: HostileGateway;
beforeAll(async () => {
  gw = await startHostileGateway();
  for (let i = 0; i < 3; i++) await gw.probe(); // warm: connections, JIT, the SQLite store
  // The encoding loads on the first count (~0.4 s once per process, not per request): not what is measured here.
  expect((await countTokens("warm up")).status).toBe(200);
}, 60_000);
afterAll(async () => {
  await gw?.close();
});

/** `work` under a second client's timed requests; asserts no wait (client-side or in the gateway) passed the bound. */
async function withoutFreezing<T>(work: () => Promise<T>): Promise<T> {
  await gw.loopDelayMs(); // starts the gateway's window
  const { result, waits, worst } = await timedWhile(work, gw.probe);
  const loop = await gw.loopDelayMs();
  expect(waits.length, "the second client got requests through").toBeGreaterThan(0);
  expect(worst, `second client's longest wait (ms), of ${waits.length}`).toBeLessThan(MAX_WAIT_MS);
  expect(loop, "the gateway's longest event-loop delay (ms)").toBeLessThan(MAX_WAIT_MS);
  return result;
}

/**
 * `work` that takes a while however it is done (megabytes to read, work through and store), under a second client's
 * timed requests: how long it takes is the machine's (two CPU hogs on 2 cores made one stall 819 ms, past
 * MAX_WAIT_MS), so the bound is a share of that instead. No wait, client-side or the gateway's event-loop delay, may
 * reach half the time `work` took: the work is shared out with the other clients, not done in one go. Measured: the
 * longest stall 16-33% of the request, idle or with the hogs (it is reading the body); done in one go, 79-98%.
 */
async function sharedOut<T>(work: () => Promise<T>): Promise<T> {
  await gw.loopDelayMs(); // starts the gateway's window
  let took = 0;
  const { result, waits, worst } = await timedWhile(async () => {
    const t0 = performance.now();
    try {
      return await work();
    } finally {
      took = performance.now() - t0;
    }
  }, gw.probe);
  const loop = await gw.loopDelayMs();
  const share = (ms: number) => `${Math.round(ms)} ms of the ${Math.round(took)} ms it took`;
  expect(waits.length, "the second client got requests through").toBeGreaterThan(0);
  expect(worst / took, `second client's longest wait, of ${waits.length}: ${share(worst)}`).toBeLessThan(0.5);
  expect(loop / took, `the gateway's longest event-loop delay: ${share(loop)}`).toBeLessThan(0.5);
  return result;
}

const countTokens = (content: string) =>
  fetch(`${gw.baseURL}/messages/count_tokens`, {
    method: "POST", headers: gw.headers(), body: JSON.stringify({ model: "openai/gpt-4o-mini", messages: [{ role: "user", content }] }),
  }).then(async (r) => ({ status: r.status, source: r.headers.get("x-mg-token-count"), body: await r.json() }));

describe("count_tokens with the local tokenizer (item 2)", () => {
  it("128 KiB of one letter is counted without holding other requests", async () => {
    const r = await withoutFreezing(() => countTokens("a".repeat(128 * 1024)));
    expect(r.status).toBe(200);
    expect(r.source).toBe("tokenizer:o200k_base");
    // o200k_base: eight a's a token, plus the message's own tokens.
    expect(r.body.input_tokens).toBeGreaterThanOrEqual(16_384);
    expect(r.body.input_tokens).toBeLessThan(16_384 + 32);
  });

  it("128 KiB of newlines and slashes after a '!' (one o200k_base piece, spaces and non-spaces alternating) is counted without holding other requests", async () => {
    const r = await withoutFreezing(() => countTokens(`!${"\n/".repeat(64 * 1024)}`));
    expect(r.status).toBe(200);
    expect(r.body.input_tokens).toBeGreaterThan(1000);
  });

  it("256 KiB of unspaced CJK (the encoder's costliest text) is counted without holding other requests", async () => {
    let seed = 3;
    const cjk = Array.from({ length: 256 * 1024 / 3 }, () => String.fromCharCode(0x4e00 + ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) % 2000))).join("");
    const r = await withoutFreezing(() => countTokens(cjk));
    expect(r.status).toBe(200);
    expect(r.body.input_tokens).toBeGreaterThan(cjk.length / 2);
  });
});

/** A streamed request's status, content type and whole body. */
async function streamed(path: string, body: Record<string, unknown>) {
  const res = await fetch(`${gw.baseURL}${path}`, {
    method: "POST", headers: { ...gw.headers(), "anthropic-version": "2023-06-01" }, body: JSON.stringify({ ...body, stream: true }),
  });
  return { status: res.status, type: res.headers.get("content-type") ?? "", text: await res.text() };
}

describe("an upstream that sends a 32 MiB SSE line (item 6)", () => {
  it("chat, relayed natively: the client gets what came before, then a 502 UPSTREAM_ERROR error chunk; the upstream is cut off", async () => {
    const before = gw.hostile.longLines.length;
    const r = await withoutFreezing(() => streamed("/chat/completions", { model: "hostile/long-line", messages: [{ role: "user", content: "hi" }] }));
    expect(r.status).toBe(200);
    expect(r.type).toContain("text/event-stream");
    expect(r.text).toContain("Here it comes: ");
    const events = r.text.split("\n\n").filter((f) => f.startsWith("data: ")).map((f) => f.slice(6));
    expect(events).not.toContain("[DONE]");
    const last = JSON.parse(events.at(-1)!);
    expect(last.error).toMatchObject({ code: "UPSTREAM_ERROR", details: { provider: "hostile", reason: "event_too_large" } });
    expect(last.error.message).toMatch(/larger than \d+ characters/);
    const rec = gw.hostile.longLines[before]!;
    await rec.done;
    expect(rec.droppedEarly, "the gateway dropped the upstream connection").toBe(true);
    expect(rec.written).toBeLessThan(LONG_LINE_BYTES);
  });

  it("messages, from an Anthropic upstream (native relay) and translated from a chat upstream: an `event: error` in Anthropic's shape", async () => {
    for (const model of ["hostile-claude/long-line", "hostile/long-line"]) {
      const before = gw.hostile.longLines.length;
      const r = await withoutFreezing(() => streamed("/messages", { model, max_tokens: 64, messages: [{ role: "user", content: "hi" }] }));
      expect(r.status, model).toBe(200);
      expect(r.text, model).toContain("Here it comes: ");
      expect(r.text, model).not.toContain("event: message_stop");
      const error = r.text.split("\n\n").find((f) => f.startsWith("event: error\n"));
      expect(error, model).toBeDefined();
      expect(JSON.parse(error!.slice(error!.indexOf("data: ") + 6))).toMatchObject({ type: "error", error: { code: "UPSTREAM_ERROR", details: { reason: "event_too_large" } } });
      const rec = gw.hostile.longLines[before]!;
      await rec.done;
      expect(rec.droppedEarly, model).toBe(true);
    }
  });

  it("responses, translated from a chat upstream: an `event: error` the openai SDK throws on", async () => {
    const before = gw.hostile.longLines.length;
    const r = await withoutFreezing(() => streamed("/responses", { model: "hostile/long-line", input: "hi" }));
    expect(r.status).toBe(200);
    expect(r.text).toContain("Here it comes: ");
    expect(r.text).not.toContain("event: response.completed");
    const error = r.text.split("\n\n").find((f) => f.startsWith("event: error\n"));
    expect(error).toBeDefined();
    expect(JSON.parse(error!.slice(error!.indexOf("data: ") + 6))).toMatchObject({ type: "error", code: "UPSTREAM_ERROR", error: { details: { reason: "event_too_large" } } });
    const rec = gw.hostile.longLines[before]!;
    await rec.done;
    expect(rec.droppedEarly).toBe(true);
  });

  it("the long line as the stream's first event: a plain 502 UPSTREAM_ERROR answer, nothing streamed", async () => {
    const before = gw.hostile.longLines.length;
    const r = await withoutFreezing(() => streamed("/chat/completions", { model: "hostile/long-line-first", messages: [{ role: "user", content: "hi" }] }));
    expect(r.status).toBe(502);
    expect(JSON.parse(r.text).error).toMatchObject({ code: "UPSTREAM_ERROR", details: { reason: "event_too_large" } });
    const rec = gw.hostile.longLines[before]!;
    await rec.done;
    expect(rec.droppedEarly).toBe(true);
  });

  it("a 32 MiB JSON answer (no stream): a 502 UPSTREAM_ERROR, and the upstream is cut off past the 16 MiB bound", async () => {
    const before = gw.hostile.longLines.length;
    const r = await withoutFreezing(async () => {
      const res = await fetch(`${gw.baseURL}/chat/completions`, { method: "POST", headers: gw.headers(), body: JSON.stringify({ model: "hostile/long-line", messages: [{ role: "user", content: "hi" }] }) });
      return { status: res.status, body: await res.json() };
    });
    expect(r.status).toBe(502);
    expect(r.body.error).toMatchObject({ code: "UPSTREAM_ERROR", details: { provider: "hostile", reason: "answer_too_large", limit_bytes: 16 * 1024 * 1024 } });
    const rec = gw.hostile.longLines[before]!;
    await rec.done;
    expect(rec.droppedEarly).toBe(true);
    expect(rec.written).toBeLessThan(LONG_LINE_BYTES);
  });

  it("the gateway's memory stays bounded and it keeps serving", async () => {
    const rss = async () => Number(/^process_resident_memory_bytes (\S+)$/m.exec(await (await fetch(gw.metricsUrl)).text())![1]);
    const before = await rss();
    await Promise.all(Array.from({ length: 2 }, () => streamed("/chat/completions", { model: "hostile/long-line", messages: [{ role: "user", content: "hi" }] })));
    // Two streams at once, each stopped at the 16 MiB event bound (one byte a character): 35–60 MiB more resident
    // memory measured; holding what was sent (2 x 32 MiB) and the copies made joining it would pass 96 MiB.
    expect((await rss()) - before).toBeLessThan(LONG_LINE_BYTES * 3);
    await gw.probe();
  });
});

describe("a Responses request of 99 000 small input items (4.8 MB, under max_body_bytes), stored", () => {
  it("is answered and stored without holding other requests; input_items lists every item with an id of its own", async () => {
    // Before: the ids minted with a crypto call each, the conversation bound's and the store's serialisation, all in
    // one go, held a second client 1.3-2.9 s here (1-3.6 s in the audit, 6-9 s with two CPU hogs), 79-98% of the
    // request's time; after, 0.2-0.8 s, 16-33% of it.
    const input = Array.from({ length: 99_000 }, (_, i) => ({ role: i % 2 ? "assistant" : "user", content: `hello there ${i}` }));
    const body = JSON.stringify({ model: "openai/gpt-4o-mini", input, max_output_tokens: 16 });
    const r = await sharedOut(async () => {
      const res = await fetch(`${gw.baseURL}/responses`, { method: "POST", headers: gw.headers(), body });
      return { status: res.status, body: await res.json() };
    });
    expect(r.status, JSON.stringify(r.body).slice(0, 300)).toBe(200);
    expect(r.body.store, `stored (the gateway said: ${gw.child.output().slice(-1500)})`).toBe(true);
    const page = async (query: string) => (await fetch(`${gw.baseURL}/responses/${r.body.id}/input_items?${query}`, { headers: gw.headers() })).json();
    const first = await page("order=asc&limit=100");
    const last = await page("order=desc&limit=100");
    expect(first.data[0].content[0].text).toBe("hello there 0");
    expect(last.data[0].content[0].text).toBe("hello there 98999");
    const ids = [...first.data, ...last.data].map((i: any) => i.id);
    for (const id of ids) expect(id).toMatch(/^msg_[0-9a-f]{24}$/);
    expect(new Set(ids).size, "every item has an id of its own").toBe(200);
  }, 60_000);
});
