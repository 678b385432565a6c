// Whether spans reach the collector: a counter of exported and failed spans on /metrics, and OpenTelemetry's own
// diagnostics (a refused export, a bad header) as warnings in the gateway's log, at most one a minute (a collector
// down for an hour must not write a line per batch). Loaded with tracing only.
import { DiagLogLevel, diag, type DiagLogger } from "@opentelemetry/api";
import { ExportResultCode, type ExportResult } from "@opentelemetry/core";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace-base";
import { Counter, type Registry } from "prom-client";
import type { Logger } from "../log.ts";

const counters = new WeakMap<Registry, Counter<"result">>();

/** gateway_trace_spans_total{result="exported"|"failed"}, one per gateway registry. */
export function spanCounter(registry: Registry): Counter<"result"> {
  let c = counters.get(registry);
  if (!c) {
    c = new Counter({
      name: "gateway_trace_spans_total",
      help: "Spans handed to the OTLP exporter, by result: exported (the collector took them) or failed (refused, unreachable or timed out: dropped).",
      labelNames: ["result"] as const,
      registers: [registry],
    });
    // Both series from the start, so increase() and an alert see the first failure.
    for (const result of ["exported", "failed"]) c.inc({ result }, 0);
    counters.set(registry, c);
  }
  return c;
}

/** The exporter, counting what each export did with its spans; a failed one is told to `warn` (rate-limited). */
export class CountingExporter implements SpanExporter {
  /** Exports sent and not yet answered: how many spans each carries. */
  private readonly pending = new Set<{ spans: number }>();

  constructor(private readonly inner: SpanExporter, private readonly counter: Counter<"result">, private readonly warn: DiagLogger["warn"]) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    const sent = { spans: spans.length };
    this.pending.add(sent);
    this.inner.export(spans, (result) => {
      // Given up on already (abandon): counted as failed then.
      if (!this.pending.delete(sent)) return done(result);
      const ok = result.code === ExportResultCode.SUCCESS;
      this.counter.inc({ result: ok ? "exported" : "failed" }, spans.length);
      if (!ok) this.warn(`${spans.length} spans dropped: the collector refused them or could not be reached`, result.error);
      done(result);
    });
  }

  /**
   * Stop waiting for the exports still unanswered (the gateway is exiting): their spans are counted as failed, and
   * what they answer later is not counted again. How many spans they carried.
   */
  abandon(): number {
    let spans = 0;
    for (const sent of this.pending) spans += sent.spans;
    this.pending.clear();
    if (spans) this.counter.inc({ result: "failed" }, spans);
    return spans;
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}

const WINDOW_MS = 60_000;

/**
 * A DiagLogger into the gateway's log: warnings and errors only (both at warn: a collector's trouble fails no
 * request), at most one line a minute, the next one saying how many were left out meanwhile.
 */
export function rateLimitedDiag(log: Logger, now: () => number = Date.now): DiagLogger {
  let last = -Infinity;
  let suppressed = 0;
  const write = (message: string, ...args: unknown[]) => {
    const t = now();
    if (t - last < WINDOW_MS) {
      suppressed++;
      return;
    }
    last = t;
    const detail = args.map((a) => (a instanceof Error ? a.message : typeof a === "string" ? a : safeJson(a))).join(" ");
    log.warn(`tracing: ${message}`, { ...(detail ? { detail } : {}), ...(suppressed ? { suppressedLastMinute: suppressed } : {}) });
    suppressed = 0;
  };
  const none = () => {};
  return { error: write, warn: write, info: none, debug: none, verbose: none };
}

function safeJson(v: unknown): string {
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}

/** Route OpenTelemetry's process-wide diagnostics to this logger (the latest tracer's, with several in a process). */
export function logDiagnostics(logger: DiagLogger): void {
  diag.setLogger(logger, { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true });
}

export function stopDiagnostics(): void {
  diag.disable();
}
