// The gateway's logger: pino (JSON lines, child loggers, redaction) behind a small interface every module uses.
// Never pass API keys to it; the redaction paths below are a second line of defence, not the first.
import cluster from "node:cluster";
import { fstatSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import pino, { type DestinationStream, type Logger as Pino } from "pino";
import { redact, redactDeep } from "./secrets/registry.ts";
import { opening } from "./log-opening.ts";
import { boundFlushSync, whenIdle } from "./log-flush.ts";

export type LogLevel = "debug" | "info" | "warn" | "error" | "silent";

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  /**
   * An info line whose fields are already one JSON object (`{"a":1}`): written as `info(msg, fields)` would write
   * it, but without pino's per-line walk of the fields and its redaction. Only for fixed-shape records that never
   * hold a credential (the access log: one per request, the hot path).
   */
  infoJson(msg: string, fieldsJson: string): void;
  /** Whether a line at this level would be written (skip building fields nobody reads). */
  enabled(level: Exclude<LogLevel, "silent">): boolean;
  /** Flush buffered lines (an async destination) and release a log file. Idempotent. */
  close(): Promise<void>;
}

/** The `log:` section of gateway.yaml. */
export interface LogOptions {
  level?: LogLevel;
  format?: "json" | "pretty";
  /** Append lines to this file instead of stderr. */
  file?: string;
  /** One line per request when it finishes (core/observability/access-log.ts). */
  access?: boolean;
  /**
   * Other processes write to the same stderr or file: the primary of `start --workers N` (its workers are known to be
   * cluster workers). To a pipe, their lines are then written so they never splice (PIPE_BUF below).
   */
  shared?: boolean;
}

/**
 * Where callers could put a credential: top level, request headers, provider and BYOK blocks. Explicit paths, not
 * wildcards: pino compiles these to plain property checks (a wildcard list cost ~50 µs a line, on every line).
 */
export const REDACT_PATHS = [
  "authorization", '["x-api-key"]', '["x-goog-api-key"]', "cookie", "apiKey", "api_key", "key", "credentials", "byok",
  "headers.authorization", 'headers["x-api-key"]', 'headers["x-goog-api-key"]', "headers.cookie",
  "provider.apiKey", "provider.api_key", "provider.credentials", "config.api_key", "config.apiKey",
  "target.credentials", "credentials.apiKey", "error.config.headers.authorization",
];

const LEVELS = new Set<string>(["debug", "info", "warn", "error", "silent"]);

/** LOG_LEVEL from the environment, when it names a level. */
export function envLogLevel(): LogLevel | undefined {
  const v = process.env.LOG_LEVEL;
  return v && LEVELS.has(v) ? (v as LogLevel) : undefined;
}

/**
 * A level name (`createLogger("silent")`, as tests do) or the `log:` options. `dest` overrides where lines go
 * (tests capture them); otherwise stderr or `file`, written asynchronously and flushed by close().
 */
export function createLogger(opts: LogLevel | LogOptions = {}, dest?: DestinationStream): Logger {
  const o: LogOptions = typeof opts === "string" ? { level: opts } : opts;
  const level = o.level ?? envLogLevel() ?? "info";
  let stream: DestinationStream | undefined = dest;
  let boom: ReturnType<typeof pino.destination> | undefined;
  let batchLimit: number | undefined;
  if (!stream && level !== "silent") {
    if (o.format === "pretty") {
      // pino-pretty only when asked: a terminal-friendly rendering, synchronous (it's for humans, not throughput).
      stream = prettyStream(o.file);
    } else {
      // Lines are buffered up to 8 KiB (to a pipe, 4 KiB: see PIPE_BUF) and flushed at least every 250 ms (and on
      // close / exit): one write(2) per batch, not per request, under load.
      // Its flushSync never loops on a reader that has gone (core/log-flush.ts).
      // Only a shared pipe needs the smaller writes: one process alone cannot splice its own lines, and on the usual
      // single process (a container's stderr) 4 KiB writes cost ~2–4 µs more per access line (bench/access-line.ts --pipe).
      const pipe = (o.shared || cluster.isWorker) && isPipe(o.file ?? 2);
      boom = boundFlushSync(pino.destination({
        dest: o.file ?? 2, sync: false, mkdir: Boolean(o.file),
        ...(pipe ? { minLength: PIPE_BUF - 1, maxWrite: PIPE_BUF } : { minLength: 8 * 1024 }),
      }));
      if (pipe) batchLimit = PIPE_BUF;
      if (o.file) opening(boom);
      stream = boom;
    }
  }
  const out = stream ?? pino.destination({ dest: 2, sync: true });
  const base = workerFields();
  const p = pino({ level, base, redact: { paths: REDACT_PATHS, censor: "[redacted]" }, timestamp: pino.stdTimeFunctions.isoTime }, out);
  // pino-pretty renders objects: pre-serialised lines go through pino there; JSON destinations take them as they are.
  return wrap(p, boom, Boolean(o.file), o.format === "pretty" ? undefined : out, batchLimit, base ? `${JSON.stringify(base).slice(1, -1)},` : "");
}

/**
 * In a worker of `start --workers N`: which worker and process wrote a line, named as the primary's lines about it
 * name them, so an operator can tell whose reload was refused or waits for a restart. Nothing in a single process.
 */
export function workerFields(c: { isWorker: boolean; worker?: { id: number } } = cluster): { worker: number; pid: number } | undefined {
  return c.isWorker && c.worker ? { worker: c.worker.id, pid: process.pid } : undefined;
}

/**
 * A write(2) to a pipe of at most PIPE_BUF bytes (4096 on Linux) is atomic: it lands whole or, the pipe full, not at
 * all (EAGAIN; pipe(7)), never in part. A larger one may be cut and interleaved with another process's write to the
 * same pipe: `start --workers N` shares one stderr, so a reader of a full pipe got two workers' lines spliced. To a
 * pipe shared with other processes every write is therefore whole lines of at most PIPE_BUF bytes. A single line longer than that cannot be
 * atomic: it still goes whole, in one write (rare: an access line is ~600 bytes).
 */
export const PIPE_BUF = 4096;

/** Whether lines to `dest` (an fd, or a file path that may be a FIFO) go down a pipe. */
function isPipe(dest: number | string): boolean {
  try {
    return (typeof dest === "number" ? fstatSync(dest) : statSync(dest)).isFIFO();
  } catch {
    return false; // no such file yet (it is created), or a closed fd: not a pipe
  }
}

/** A copy of a warning's fields with every string masked (the caller's objects are left as they are). */
function maskFields(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k in fields) {
    const v = fields[k];
    if (typeof v === "string") out[k] = redact(v);
    else if (v && typeof v === "object") {
      try {
        out[k] = redactDeep(structuredClone(v));
      } catch {
        out[k] = v; // not cloneable (a function inside): pino's own redaction paths still apply
      }
    } else out[k] = v;
  }
  return out;
}

function prettyStream(file?: string): DestinationStream {
  const pretty = requirePretty();
  return pretty({ colorize: !file && process.stderr.isTTY, destination: file ?? 2, sync: true, mkdir: Boolean(file), translateTime: "SYS:standard", ignore: "pid,hostname" });
}

const requirePretty = () => createRequire(import.meta.url)("pino-pretty") as (o: Record<string, unknown>) => DestinationStream;

/**
 * Pre-serialised lines (infoJson: the access log) are joined here and handed to the file or stderr writer a batch at
 * a time — when BATCH_CHARS have gathered, at the periodic flush, before any other line (so lines keep their order),
 * on close() and at process exit — not one sonic-boom write per request: each write there costs ~3 µs of CPU for a
 * 500-byte line (it measures and copies its buffer), one per 16 KB ~1 µs a line.
 */
const BATCH_CHARS = 16 * 1024;
/** Loggers with lines still to write, flushed synchronously if the process exits without closing them. */
const unclosed = new Set<() => void>();
let exitHook = false;

function wrap(p: Pino, boom: ReturnType<typeof pino.destination> | undefined, ownFile: boolean, json: DestinationStream | undefined, pipeBytes: number | undefined, baseJson: string): Logger {
  let closed: Promise<void> | undefined;
  let dirty = false;
  let batch = "";
  /** The batch's size in bytes, counted only for a pipe (a write's limit there is in bytes, not characters). */
  let batchBytes = 0;
  const drain = () => {
    if (!batch || !boom) return;
    const text = batch;
    batch = "";
    batchBytes = 0;
    boom.write(text);
  };
  const atExit = () => {
    drain();
    try {
      boom?.flushSync();
    } catch { /* not open yet, or closed */ }
  };
  if (boom) {
    unclosed.add(atExit);
    if (!exitHook) {
      exitHook = true;
      process.once("exit", () => {
        for (const flush of unclosed) flush();
      });
    }
  }
  const timer = boom && setInterval(() => {
    if (!dirty) return;
    dirty = false;
    drain();
    try {
      boom.flush();
    } catch { /* still opening, or closed */ }
  }, 250);
  timer?.unref();
  const at = (lvl: "debug" | "info" | "warn" | "error") => (msg: string, fields?: Record<string, unknown>) => {
    if (!p.isLevelEnabled(lvl)) return; // a debug line at the default level costs no redaction
    dirty = true;
    if (batch) drain(); // the access lines before this one go first
    // Warnings, errors and debug lines may quote text the gateway does not control (an upstream's failure, a cause,
    // an MCP server's stderr): credentials masked (core/secrets). Not info lines: the access log is one per request
    // and holds no free text.
    if (lvl !== "info") {
      msg = redact(msg);
      if (fields) fields = maskFields(fields);
    }
    if (fields) p[lvl](fields, msg);
    else p[lvl](msg);
  };
  return {
    debug: at("debug"),
    info: at("info"),
    warn: at("warn"),
    error: at("error"),
    infoJson(msg, fieldsJson) {
      if (!p.isLevelEnabled("info")) return;
      if (!json) return p.info(JSON.parse(fieldsJson), msg);
      dirty = true;
      // pino's own line shape: level, time, the worker's fields, the fields, msg.
      const fields = fieldsJson.length > 2 ? `${fieldsJson.slice(1, -1)},` : "";
      const line = `{"level":30,"time":"${new Date().toISOString()}",${baseJson}${fields}"msg":${JSON.stringify(msg)}}\n`;
      if (!boom) return void json.write(line); // a caller's stream (tests) gets each line as it comes
      if (closed) return void (ownFile || boom.write(line)); // stderr stays open after close(); a closed file takes no more
      if (pipeBytes) {
        // A batch is one sonic-boom chunk, one write(2): whole lines, at most PIPE_BUF bytes.
        const bytes = Buffer.byteLength(line);
        if (batchBytes + bytes > pipeBytes) drain();
        batch += line;
        batchBytes += bytes;
        return;
      }
      batch += line;
      if (batch.length >= BATCH_CHARS) drain();
    },
    enabled: (lvl) => p.isLevelEnabled(lvl),
    close() {
      return (closed ??= new Promise<void>((resolve) => {
        clearInterval(timer);
        drain();
        if (!boom) return resolve();
        // A write in flight comes back first: a flush before it could overtake it, or be glued to its unwritten rest.
        void whenIdle(boom).then(() => finish(boom, resolve));
      }));
    },
  };

  function finish(boom: ReturnType<typeof pino.destination>, resolve: () => void) {
    unclosed.delete(atExit);
    drain(); // lines logged while the write was in flight
    try {
      boom.flushSync();
    } catch { /* not ready yet (file still opening): end() flushes once it is */ }
    if (!ownFile) return resolve(); // never close the process's own stderr
    const done = () => resolve();
    boom.once("close", done);
    boom.once("error", done);
    boom.end();
  }
}
