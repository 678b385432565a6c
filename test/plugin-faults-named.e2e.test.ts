// A third-party plugin's fault fails its own request with the spec's 500 envelope, and the log says which plugin it
// was and where (docs/plugins.md "Failures": "the error is logged, not sent"). Before, a throw in handle() was logged
// as `request failed` with the message only, a throw in its stream wrapper not at all, a throwing onFinish and a
// refused header without the plugin, and an answer with status 0 went out as a 500 with the plugin's own body.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { keyEntry, testKey } from "./helpers/gateway.ts";
import { startLoggedGateway, type CapturedLog } from "./helpers/log-capture.ts";
import type { RunningGateway } from "../core/server.ts";
import { builtins } from "../core/builtins.ts";

const KEY = testKey("faults");
const dir = mkdtempSync(join(tmpdir(), "mg-faults-"));

// Faults as the request's x-fault header says. "passer" sits before it and only passes errors on: never the one named.
writeFileSync(join(dir, "faulty.mjs"), `export default { name: "faulty", async handle(ctx, next) {
  const how = ctx.headers["x-fault"];
  if (how === "sync-throw") (() => { throw new TypeError("faulty sync throw"); })();
  if (how === "reject") await Promise.reject(new Error("faulty async reject"));
  if (how === "throw-string") throw "a bare string";
  if (how === "finish-before") ctx.onFinish(() => { throw new Error("faulty onFinish before next"); });
  if (how === "bad-header") ctx.responseHeaders["x-bad"] = "a\\nb";
  if (how === "status-0") { ctx.response = { kind: "json", status: 0, body: {} }; return; }
  await next();
  if (how === "after-throw") throw new Error("faulty throw after next");
  if (how === "finish-after") ctx.onFinish(() => { throw new Error("faulty onFinish after next"); });
  if ((how === "stream-throw" || how === "stream-throw-wrapped") && ctx.response?.kind === "stream") {
    const inner = ctx.response.events;
    ctx.response.events = (async function* () {
      let n = 0;
      for await (const ev of inner) {
        if (++n === 3) throw new Error("faulty stream transform");
        yield ev;
      }
    })();
  }
} };
`);
writeFileSync(join(dir, "passer.mjs"), `export default { name: "passer", async handle(ctx, next) {
  await next();
  if (ctx.headers["x-fault"] === "stream-throw-wrapped" && ctx.response?.kind === "stream") {
    const inner = ctx.response.events;
    ctx.response.events = (async function* () { for await (const ev of inner) yield ev; })();
  }
} };`);

let gw: RunningGateway, log: CapturedLog, baseURL: string;

beforeAll(async () => {
  ({ gw, log, baseURL } = await startLoggedGateway({
    store: { kind: "memory" },
    providers: { sim: { protocol: "sim" } },
    models: { "sim/echo": { endpoints: [{ provider: "sim", model: "echo" }] } },
    projects: { p: { keys: [keyEntry("k", KEY)] } },
    plugins: { faulty: { module: join(dir, "faulty.mjs") }, passer: { module: join(dir, "passer.mjs") } },
    pipeline: ["auth", "passer", "faulty", ...builtins.defaultPipeline().filter((n) => n !== "auth")],
  }, {}, "info"));
});

afterAll(async () => {
  await gw?.close();
  rmSync(dir, { recursive: true, force: true });
});

const chat = (how: string, stream = false) =>
  fetch(`${baseURL}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${KEY}`, "x-fault": how },
    body: JSON.stringify({ model: "sim/echo", stream, messages: [{ role: "user", content: "one two three four five six seven eight" }] }),
  });

/** The error lines of the request answered by `r`, once written (an onFinish runs after the answer). */
async function errorLines(r: Response, msg: string): Promise<Array<Record<string, any>>> {
  const id = r.headers.get("x-request-id");
  for (const end = Date.now() + 3000; ; await new Promise((w) => setTimeout(w, 20))) {
    const lines = log.records().filter((l) => l.level >= 50 && l.requestId === id && l.msg === msg);
    if (lines.length || Date.now() > end) return lines;
  }
}

describe("a plugin whose handle throws", () => {
  for (const [how, error] of [
    ["sync-throw", "TypeError: faulty sync throw"],
    ["reject", "Error: faulty async reject"],
    ["throw-string", "a bare string"],
    ["after-throw", "Error: faulty throw after next"],
  ] as const) {
    it(`${how}: the client gets the 500 envelope; the log names the plugin (not the one that passed it on) and the stack`, async () => {
      const r = await chat(how);
      expect(r.status).toBe(500);
      const body = await r.json();
      expect(body.error).toMatchObject({ code: "INTERNAL", message: "Internal gateway error" });
      expect(JSON.stringify(body)).not.toContain("faulty");
      const [line] = await errorLines(r, "request failed");
      expect(line).toMatchObject({ plugin: "faulty", error });
      if (how !== "throw-string") expect(line!.stack).toContain("faulty.mjs");
    });
  }
});

describe("a plugin's stream wrapper that throws", () => {
  it("ends the stream with the in-band error and logs the cause, naming the plugin", async () => {
    const r = await chat("stream-throw", true);
    expect(r.status).toBe(200);
    const text = await r.text();
    expect(text).toContain('"code":"INTERNAL"');
    const [line] = await errorLines(r, "request failed");
    expect(line).toMatchObject({ plugin: "faulty", error: "Error: faulty stream transform" });
    expect(line!.stack).toContain("faulty.mjs");
  });
});

describe("a stream two plugins wrapped, which then threw", () => {
  it("names both as \"one of\", not as if each had thrown", async () => {
    const r = await chat("stream-throw-wrapped", true);
    expect(await r.text()).toContain('"code":"INTERNAL"');
    const [line] = await errorLines(r, "request failed");
    expect(line).toMatchObject({ plugins: ["faulty", "passer"], blame: "one of these plugins' stream wrappers, or the stream they wrapped", error: "Error: faulty stream transform" });
    expect(line!.plugin).toBeUndefined();
  });
});

describe("a plugin's onFinish callback that throws", () => {
  for (const how of ["finish-before", "finish-after"]) {
    it(`${how}: the answer is as usual; the log names the plugin and the stack`, async () => {
      const r = await chat(how);
      expect(r.status).toBe(200);
      const [line] = await errorLines(r, "onFinish callback failed");
      expect(line).toMatchObject({ plugin: "faulty" });
      expect(line!.stack).toContain("faulty.mjs");
    });
  }
});

describe("a response header Node refuses", () => {
  it("is left out, and the log names the plugin that set it", async () => {
    const r = await chat("bad-header");
    expect(r.status).toBe(200);
    expect(r.headers.get("x-bad")).toBeNull();
    const [line] = await errorLines(r, "response head refused by Node; sent without it");
    expect(line).toMatchObject({ headers: ["x-bad"], plugin: "faulty" });
  });
});

describe("a plugin's answer with a status that is no HTTP status", () => {
  it("becomes the spec's 500 envelope, and the log names the plugin and the status", async () => {
    const r = await chat("status-0");
    expect(r.status).toBe(500);
    expect((await r.json()).error).toMatchObject({ code: "INTERNAL", type: "server_error" });
    const [line] = await errorLines(r, "request failed");
    expect(line).toMatchObject({ plugin: "faulty" });
    expect(line!.error).toContain("status 0");
  });
});
