// CPU per access line, old path against new, in one process (issue 32): a figure that holds up on a busy machine
// where whole-process CPU per request moves ±10 % between runs. Both write the same record to a log file through
// core/log.ts, as the shipped gateway does: `info("request", record)` (pino serialises and redacts each line, one
// sonic-boom write per line) and `infoJson("request", JSON.stringify(record))` (serialised once, written in batches).
// CPU is the process's user + system time (all threads: the file writes run in libuv's pool), in alternating rounds.
// --pipe: the log goes down a pipe (a FIFO that `cat` copies to the file), as stderr under a log shipper or
// `start --workers N` does: writes of at most PIPE_BUF bytes there (core/log.ts).
//   npx tsx bench/access-line.ts [--lines 20000] [--rounds 9] [--pipe]
import { spawn, execFileSync } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { createLogger, type Logger } from "../core/log.ts";

const { values } = parseArgs({ options: { lines: { type: "string", default: "20000" }, rounds: { type: "string", default: "9" }, pipe: { type: "boolean", default: false } } });
const LINES = Number(values.lines);
const ROUNDS = Number(values.rounds);

/** What core/observability/access-log.ts builds for a JSON chat completion (field for field, typical values). */
const record = (i: number) => ({
  requestId: `req_${(0x1000000 + i).toString(16)}9f0c2d4e6a8b1c3e5f7a9b0c2d`, generationId: `gen_01KB${i}XK4Q9ZV3M7N2P6R8T0W`,
  traceId: undefined, project: "shipped", keyId: "shipped-live", method: "POST", path: "/api/v1/chat/completions",
  endpoint: "chat", model: "openai/gpt-4o-mini", provider: "openai",
  attempts: [{ provider: "openai", model: "gpt-4o-mini", status: 200, ms: 1.9 }],
  status: 200, errorCode: undefined, stream: false, aborted: false, ttfbMs: 2.4, durationMs: 2.6, bytesIn: 231, bytesOut: 1018,
  inputTokens: 12, outputTokens: 50, costUsd: "0.0000318",
});

const dir = mkdtempSync(join(tmpdir(), "mg-access-line-"));
const cpuUs = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

async function round(log: Logger, json: boolean): Promise<number> {
  const t0 = cpuUs();
  for (let i = 0; i < LINES; i++) {
    const r = record(i);
    if (json) log.infoJson("request", JSON.stringify(r));
    else log.info("request", r);
    if (i % 32 === 31) await new Promise(setImmediate); // requests arrive over many loop turns; let the writer run
  }
  await new Promise((r) => setTimeout(r, 300)); // the periodic flush and the pool's writes finish inside the round
  return (cpuUs() - t0) / LINES;
}

const files = { pino: join(dir, "pino.log"), infoJson: join(dir, "json.log") };
/** Where a logger writes: the file, or a FIFO copied to it by `cat` (done once the logger closes the FIFO). */
const copiers: Promise<unknown>[] = [];
const target = (file: string) => {
  if (!values.pipe) return file;
  const fifo = `${file}.fifo`;
  execFileSync("mkfifo", [fifo]);
  copiers.push(once(spawn("sh", ["-c", 'exec cat "$0" > "$1"', fifo, file], { stdio: "ignore" }), "exit"));
  return fifo;
};
const loggers = { pino: createLogger({ level: "info", file: target(files.pino) }), infoJson: createLogger({ level: "info", file: target(files.infoJson) }) };
await new Promise((r) => setTimeout(r, 200));
const per: Record<string, number[]> = { pino: [], infoJson: [] };
for (let k = 0; k < ROUNDS; k++) {
  for (const name of k % 2 ? (["infoJson", "pino"] as const) : (["pino", "infoJson"] as const)) per[name]!.push(await round(loggers[name], name === "infoJson"));
}
await Promise.all(Object.values(loggers).map((l) => l.close()));
await Promise.all(copiers);
// Both files hold the same lines (time aside): the new path writes what the old one did.
const strip = (f: string) => readFileSync(f, "utf8").replace(/"time":"[^"]+"/g, "").split("\n");
const [a, b] = [strip(files.pino), strip(files.infoJson)];
if (a.length !== b.length || a.some((l, i) => l !== b[i])) throw new Error("the two paths wrote different lines");
const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[xs.length >> 1]!;
process.stdout.write(`CPU per access line to a ${values.pipe ? "pipe" : "file"} (user + system, all threads; median of ${ROUNDS} rounds of ${LINES}; ${a.length - 1} identical lines each):\n`);
for (const [name, xs] of Object.entries(per)) process.stdout.write(`  ${name.padEnd(9)} ${median(xs).toFixed(2)} us   (rounds: ${xs.map((x) => x.toFixed(2)).join(" ")})\n`);
process.stdout.write(`  infoJson / pino: ${(median(per.infoJson!) / median(per.pino!)).toFixed(2)}\n`);
