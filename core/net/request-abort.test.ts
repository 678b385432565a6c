import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { Pool } from "undici";
import { RequestAbort, UpstreamCancel, upstreamSignal } from "./request-abort.ts";

describe("RequestAbort", () => {
  it("aborts the signal and the upstream emitter together, once, with the signal's reason", () => {
    const a = new RequestAbort();
    const seen: unknown[] = [];
    a.signal.addEventListener("abort", () => seen.push("signal"));
    a.upstream.once("abort", () => seen.push(["upstream", a.upstream.reason]));
    const reason = new Error("shutdown");
    a.abort(reason);
    a.abort(new Error("again"));
    expect(a.signal.aborted).toBe(true);
    expect(a.upstream.aborted).toBe(true);
    expect(seen).toEqual(["signal", ["upstream", reason]]);
  });

  it("hands undici the request's emitter, and any other signal as it is", () => {
    const a = new RequestAbort();
    expect(upstreamSignal(a.signal)).toBe(a.upstream);
    const other = new AbortController().signal;
    expect(upstreamSignal(other)).toBe(other);
  });

  it("a removed listener is not called; a throwing one does not stop the rest", () => {
    const u = new UpstreamCancel();
    const calls: string[] = [];
    const gone = () => calls.push("gone");
    u.once("abort", gone);
    u.once("abort", () => { throw new Error("boom"); });
    u.once("abort", () => calls.push("kept"));
    u.removeListener("abort", gone);
    u.fire("why");
    expect(calls).toEqual(["kept"]);
  });
});

describe("undici with the upstream emitter", () => {
  let server: Server | undefined;
  let pool: Pool | undefined;
  afterEach(async () => {
    await pool?.close();
    server?.closeAllConnections();
    server?.close();
  });

  it("cancels a request in flight, and refuses one started after the abort", async () => {
    let closed!: () => void;
    const upstreamClosed = new Promise<void>((r) => (closed = r));
    server = createServer((req) => req.socket.once("close", closed)); // never answers
    await new Promise<void>((r) => server!.listen(0, "127.0.0.1", r));
    pool = new Pool(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    const a = new RequestAbort();
    const pending = pool.request({ path: "/", method: "GET", signal: upstreamSignal(a.signal) as never });
    setTimeout(() => a.abort(), 50);
    await expect(pending).rejects.toMatchObject({ name: "AbortError" });
    await upstreamClosed; // the upstream connection was torn down, not left to finish
    await expect(pool.request({ path: "/", method: "GET", signal: upstreamSignal(a.signal) as never })).rejects.toMatchObject({ name: "AbortError" });
  });
});
