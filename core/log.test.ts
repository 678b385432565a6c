import { describe, expect, it } from "vitest";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { pathToFileURL } from "node:url";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { createLogger } from "./log.ts";

function sink() {
  const lines: string[] = [];
  const stream = new Writable({ write(c, _e, done) { lines.push(...String(c).split("\n").filter(Boolean)); done(); } });
  return { lines, stream };
}

describe("createLogger", () => {
  it("writes one JSON line per call with level, time, message and fields; below the level nothing", () => {
    const { lines, stream } = sink();
    const log = createLogger({ level: "info" }, stream);
    log.debug("hidden");
    log.info("hello", { requestId: "r1", n: 2 });
    log.error("bad");
    expect(lines).toHaveLength(2);
    const first = JSON.parse(lines[0]!);
    expect(first).toMatchObject({ level: 30, msg: "hello", requestId: "r1", n: 2 });
    expect(Date.parse(first.time)).not.toBeNaN();
    expect(JSON.parse(lines[1]!)).toMatchObject({ level: 50, msg: "bad" });
    expect(log.enabled("info")).toBe(true);
    expect(log.enabled("debug")).toBe(false);
  });

  it("infoJson writes the same line info() would for those fields, and nothing below info", () => {
    const { lines, stream } = sink();
    const log = createLogger({ level: "info" }, stream);
    const fields = { requestId: "r1", model: 'a "quoted"\nname', n: 2, attempts: [{ provider: "p", ms: 1.5 }], stream: false };
    log.info("request", fields);
    log.infoJson("request", JSON.stringify(fields));
    log.infoJson("empty", "{}");
    expect(lines).toHaveLength(3);
    const withoutTime = (l: string) => l.replace(/"time":"[^"]+"/, '"time":"T"');
    expect(withoutTime(lines[1]!)).toBe(withoutTime(lines[0]!));
    expect(Date.parse(JSON.parse(lines[1]!).time)).not.toBeNaN();
    expect(JSON.parse(lines[2]!)).toEqual({ level: 30, time: expect.any(String), msg: "empty" });
    const quiet = sink();
    createLogger({ level: "warn" }, quiet.stream).infoJson("request", JSON.stringify(fields));
    expect(quiet.lines).toEqual([]);
  });

  it("silent writes nothing and reports every level disabled", () => {
    const { lines, stream } = sink();
    const log = createLogger("silent", stream);
    log.error("nope");
    expect(lines).toEqual([]);
    expect(log.enabled("error")).toBe(false);
  });

  it("masks credential shapes in the free text of debug lines too (an MCP server's stderr is logged there)", () => {
    const { lines, stream } = sink();
    createLogger("debug", stream).debug("mcp server stderr", { text: "connecting with Authorization: Bearer tok-MCPSECRETVALUE-1234567890" });
    expect(lines[0]).not.toContain("tok-MCPSECRETVALUE-1234567890");
  });

  it("redacts credentials wherever a caller put them", () => {
    const { lines, stream } = sink();
    createLogger("debug", stream).info("x", {
      authorization: "Bearer mg_live_secret1", headers: { "x-api-key": "secret2", authorization: "Bearer secret3" },
      provider: { apiKey: "secret4", api_key: "secret5" }, target: { credentials: { apiKey: "secret6" } },
    });
    expect(lines[0]).not.toMatch(/secret\d/);
    expect(JSON.parse(lines[0]!).headers["x-api-key"]).toBe("[redacted]");
  });

  it("a file destination is written asynchronously and flushed by close()", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "mg-log-")), "sub", "gw.log");
    const log = createLogger({ level: "info", file });
    for (let i = 0; i < 100; i++) log.info("line", { i });
    await log.close();
    const lines = readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l));
    expect(lines).toHaveLength(100);
    expect(lines[99]).toMatchObject({ msg: "line", i: 99 });
  });

  it("access lines (infoJson) go to a file in batches, in order with other lines, every one of them by close()", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "mg-log-")), "access.log");
    const log = createLogger({ level: "info", file });
    for (let i = 0; i < 2000; i++) {
      log.infoJson("request", JSON.stringify({ i, path: "/api/v1/chat/completions", pad: "x".repeat(200) }));
      if (i === 1000) log.warn("in between", { i });
    }
    await log.close();
    const lines = readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l));
    expect(lines).toHaveLength(2001);
    expect(lines[1001]).toMatchObject({ level: 40, msg: "in between", i: 1000 });
    const access = lines.filter((l) => l.msg === "request").map((l) => l.i);
    expect(access).toEqual(Array.from({ length: 2000 }, (_, i) => i));
  });

  it("a few access lines reach the file without close() (the periodic flush), and a process that exits without close() loses none", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mg-log-"));
    const quiet = join(dir, "quiet.log");
    const log = createLogger({ level: "info", file: quiet });
    log.infoJson("request", '{"i":1}');
    let text = "";
    for (let i = 0; i < 100 && !text.includes('"i":1'); i++) {
      await new Promise((r) => setTimeout(r, 50));
      text = existsSync(quiet) ? readFileSync(quiet, "utf8") : "";
    }
    expect(text).toContain('"msg":"request"');
    await log.close();

    // A child process writes 200 lines (~14 KB, less than a batch: nothing is in flight on the writer's thread) and calls
    // process.exit() at once. (300 were ~21 KB: a batch went to the thread pool first, and under load the exit's
    // synchronous write of the rest could land before it.)
    const file = join(dir, "exit.log");
    const script = join(dir, "exit.mts"); // an ES module wherever it is (top-level await)
    writeFileSync(script, `import { createLogger } from ${JSON.stringify(pathToFileURL(join(import.meta.dirname, "log.ts")).href)};
const log = createLogger({ level: "info", file: ${JSON.stringify(file)} });
await new Promise((r) => setTimeout(r, 100));
for (let i = 0; i < 200; i++) log.infoJson("request", JSON.stringify({ i }));
process.exit(0);
`);
    execFileSync(process.execPath, ["--import", "tsx", script], { cwd: import.meta.dirname, timeout: 20_000 });
    const written = readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l).i);
    expect(written).toEqual(Array.from({ length: 200 }, (_, i) => i));
  });

  it("a quiet file logger still gets its lines out without close() (a periodic flush)", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "mg-log-")), "quiet.log");
    const log = createLogger({ level: "info", file });
    log.info("one line");
    let text = "";
    for (let i = 0; i < 100 && !text.includes("one line"); i++) {
      await new Promise((r) => setTimeout(r, 50));
      text = existsSync(file) ? readFileSync(file, "utf8") : "";
    }
    expect(text).toContain("one line");
    await log.close();
  });

  it("format pretty renders for humans (pino-pretty), not JSON", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "mg-log-")), "pretty.log");
    const log = createLogger({ level: "info", format: "pretty", file });
    log.warn("look here", { requestId: "r9" });
    await log.close();
    const text = readFileSync(file, "utf8");
    expect(text).toContain("look here");
    expect(text).toContain("WARN");
    expect(() => JSON.parse(text.trim().split("\n")[0]!)).toThrow();
  });
});
