import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServer, type Server } from "node:http";
import OpenAI from "openai";
import { KEEP_ALIVE, LiveEvents } from "./live-events.ts";
import { encodeSse } from "../sse/encode.ts";
import type { SseEvent } from "../sse/parse.ts";

describe("LiveEvents.during", () => {
  it("yields what the work pushes while it runs, not once it ends, and its result", async () => {
    const live = new LiveEvents();
    let finish!: (v: string) => void;
    const work = new Promise<string>((r) => { finish = r; });
    live.push({ data: "before" });
    const it = live.during(work);
    expect((await it.next()).value).toEqual({ data: "before" });
    const next = it.next();
    live.push({ data: "started" }); // the work is still running
    expect((await next).value).toEqual({ data: "started" });
    const last = it.next();
    live.push({ data: "ended" });
    finish("result");
    expect((await last).value).toEqual({ data: "ended" });
    expect(await it.next()).toEqual({ done: true, value: "result" });
  });

  it("sends a keep-alive comment while the work is silent, and rethrows its failure", async () => {
    const live = new LiveEvents();
    let fail!: (e: Error) => void;
    const it = live.during(new Promise<never>((_, reject) => { fail = reject; }), 5);
    expect((await it.next()).value).toBe(KEEP_ALIVE);
    const after = it.next();
    fail(new Error("tool failed"));
    // A keep-alive may be under way as it fails; the failure follows.
    const r = await after.then((s) => (s.value === KEEP_ALIVE ? it.next() : s), (e) => Promise.reject(e)).catch((e: Error) => e);
    expect(r).toBeInstanceOf(Error);
  });
});

describe("the keep-alive on the wire", () => {
  let http: Server;
  let baseURL: string;
  beforeAll(async () => {
    const ev = (type: string, extra: object, seq: number): SseEvent => ({ event: type, data: JSON.stringify({ type, sequence_number: seq, ...extra }) });
    const response = { id: "resp_1", object: "response", status: "completed", output: [], model: "m" };
    http = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end([ev("response.created", { response: { ...response, status: "in_progress" } }, 0), KEEP_ALIVE, KEEP_ALIVE, ev("response.completed", { response }, 1)].map(encodeSse).join(""));
    });
    await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
    baseURL = `http://127.0.0.1:${(http.address() as { port: number }).port}/v1`;
  });
  afterAll(() => new Promise((r) => http.close(r)));

  it("is an SSE comment line the OpenAI SDK ignores", async () => {
    expect(encodeSse(KEEP_ALIVE)).toBe(": keep-alive\n\n");
    const client = new OpenAI({ apiKey: "x", baseURL, maxRetries: 0 });
    const types: string[] = [];
    for await (const e of await client.responses.create({ model: "m", input: "hi", stream: true })) types.push(e.type);
    expect(types).toEqual(["response.created", "response.completed"]);
  });
});
