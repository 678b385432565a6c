// The gateway's logger: pino (JSON lines, child loggers, redaction) behind a small interface every module uses.
// Never pass API keys to it; the redaction paths below are a second line of defence, not the first.
import { createRequire } from "node:module";
import pino, { type DestinationStream, type Logger as Pino } from "pino";

export type LogLevel = "debug" | "info" | "warn" | "error" | "silent";

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
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
}

/** Anything that looks like a credential, wherever a caller put it (headers, BYOK blocks, provider configs). */
export const REDACT_PATHS = [
  "authorization", "*.authorization", "*.*.authorization",
  '["x-api-key"]', '*["x-api-key"]', '*.*["x-api-key"]',
  '["x-goog-api-key"]', '*["x-goog-api-key"]', '*.*["x-goog-api-key"]',
  "apiKey", "*.apiKey", "*.*.apiKey", "api_key", "*.api_key", "*.*.api_key",
  "key", "*.key", "credentials", "*.credentials", "*.*.credentials", "byok", "*.byok",
  "cookie", "*.cookie", "*.*.cookie",
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
  if (!stream && level !== "silent") {
    if (o.format === "pretty") {
      // pino-pretty only when asked: a terminal-friendly rendering, synchronous (it's for humans, not throughput).
      stream = prettyStream(o.file);
    } else {
      boom = pino.destination({ dest: o.file ?? 2, sync: false, mkdir: Boolean(o.file), minLength: 4096 });
      stream = boom;
    }
  }
  const p = pino({ level, base: undefined, redact: { paths: REDACT_PATHS, censor: "[redacted]" }, timestamp: pino.stdTimeFunctions.isoTime }, stream ?? pino.destination({ dest: 2, sync: true }));
  return wrap(p, boom, Boolean(o.file));
}

function prettyStream(file?: string): DestinationStream {
  const pretty = requirePretty();
  return pretty({ colorize: !file && process.stderr.isTTY, destination: file ?? 2, sync: true, mkdir: Boolean(file), translateTime: "SYS:standard", ignore: "pid,hostname" });
}

const requirePretty = () => createRequire(import.meta.url)("pino-pretty") as (o: Record<string, unknown>) => DestinationStream;

function wrap(p: Pino, boom: ReturnType<typeof pino.destination> | undefined, ownFile: boolean): Logger {
  let closed: Promise<void> | undefined;
  const at = (lvl: "debug" | "info" | "warn" | "error") => (msg: string, fields?: Record<string, unknown>) => {
    if (fields) p[lvl](fields, msg);
    else p[lvl](msg);
  };
  return {
    debug: at("debug"),
    info: at("info"),
    warn: at("warn"),
    error: at("error"),
    enabled: (lvl) => p.isLevelEnabled(lvl),
    close() {
      return (closed ??= new Promise<void>((resolve) => {
        if (!boom) return resolve();
        const done = () => resolve();
        try {
          boom.flushSync();
        } catch { /* not ready yet (file still opening): end() flushes once it is */ }
        if (!ownFile) return resolve(); // never close the process's own stderr
        boom.once("close", done);
        boom.once("error", done);
        boom.end();
      }));
    },
  };
}
