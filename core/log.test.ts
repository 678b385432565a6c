import { describe, expect, it } from "vitest";
import { closeSync, constants, existsSync, mkdtempSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { pathToFileURL } from "node:url";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { createLogger } from "./log.ts";
import { readSlowly } from "./slow-fifo-reader.testkit.ts";

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

  it("in a worker of start --workers N every line names the worker and its pid, access lines too; a single process's do not", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mg-log-worker-"));
    const file = join(dir, "worker.log");
    const script = join(dir, "worker.mts");
    writeFileSync(script, `import cluster from "node:cluster";
import { createLogger } from ${JSON.stringify(pathToFileURL(join(import.meta.dirname, "log.ts")).href)};
if (cluster.isPrimary) {
  cluster.fork().once("exit", () => {
    const log = createLogger({ level: "info", file: ${JSON.stringify(file)} });
    log.info("primary line");
    void log.close();
  });
} else {
  const log = createLogger({ level: "info", file: ${JSON.stringify(file)} });
  log.warn("config reload refused; still serving the previous config", { trigger: "file" });
  log.infoJson("request", '{"status":200}');
  await log.close();
  process.exit(0);
}
`);
    execFileSync(process.execPath, ["--import", "tsx", script], { cwd: import.meta.dirname, timeout: 20_000 });
    const [refused, request, primary] = readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l));
    expect(refused).toMatchObject({ worker: 1, msg: "config reload refused; still serving the previous config", trigger: "file" });
    expect(request).toMatchObject({ level: 30, worker: 1, pid: refused.pid, status: 200, msg: "request" });
    expect(refused.pid).toEqual(expect.any(Number));
    expect(primary).not.toHaveProperty("worker");
    expect(primary).not.toHaveProperty("pid");
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

// `start --workers N`: every worker writes to the same inherited stderr. A write(2) to a pipe larger than PIPE_BUF is
// not atomic, so while the pipe is full two workers' writes could interleave and the reader got spliced lines.
describe("workers sharing one stderr pipe with a slow reader", () => {
  const WORKERS = 2;
  const N = 600;
  const child = (worker: number) => `
const { createLogger } = await import(${JSON.stringify(pathToFileURL(join(import.meta.dirname, "log.ts")).href)});
const log = createLogger({ access: true, shared: true }); // as a cluster worker's logger is
for (let i = 0; i < ${N}; i++) {
  // An access line's size (~600 bytes), a non-ASCII model name now and then (bytes, not characters, fill a pipe).
  log.infoJson("request", JSON.stringify({ worker: ${worker}, seq: i, model: i % 7 ? "openai/gpt-4o-mini" : "modèle-ü/ßüß", pad: "x".repeat(480) }));
  if (i % 50 === 0) log.warn("a warning between access lines", { worker: ${worker}, seq: i });
  if (i % 20 === 0) await new Promise((r) => setTimeout(r, 2));
}
await log.close();
process.exit(0);`;

  it("gets every line from every worker whole through a pipe read at 40 KB/s", async () => {
    const f = join(mkdtempSync(join(tmpdir(), "mg-log-")), "p");
    execFileSync("mkfifo", [f]);
    const reader = openSync(f, constants.O_RDONLY | constants.O_NONBLOCK);
    const writer = openSync(f, constants.O_WRONLY);
    const { LOG_LEVEL: _, ...env } = process.env;
    const children = Array.from({ length: WORKERS }, (_, w) =>
      spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", child(w)], { stdio: ["ignore", "ignore", writer], env, cwd: import.meta.dirname }));
    closeSync(writer); // the children's copies are the only ones: the pipe ends when both have exited
    const exited = Promise.all(children.map((c) => once(c, "exit") as Promise<[number | null]>));
    const read = await readSlowly(reader, 40_000); // 40 KB/s: the pipe stays full, both workers wait on it
    closeSync(reader);
    const statuses = (await exited).map(([s]) => s);
    const lines = read.toString().split("\n");
    expect(lines.pop()).toBe(""); // the last line ends with its newline
    const broken = lines.filter((l) => {
      try {
        JSON.parse(l);
        return false;
      } catch {
        return true;
      }
    });
    expect(broken.map((l) => `${l.slice(0, 40)}…${l.slice(-40)}`)).toEqual([]);
    const parsed = lines.map((l) => JSON.parse(l) as { msg: string; worker: number; seq: number });
    for (let w = 0; w < WORKERS; w++) {
      const mine = parsed.filter((l) => l.worker === w);
      expect(mine.filter((l) => l.msg === "request").map((l) => l.seq)).toEqual(Array.from({ length: N }, (_, i) => i));
      expect(mine.filter((l) => l.msg !== "request")).toHaveLength(N / 50);
    }
    expect(statuses).toEqual(Array(WORKERS).fill(0));
  }, 180_000);
});
