// Events a long piece of work makes (the mcp loop's tool calls), sent as they are made rather than once it ends, with
// a keep-alive comment while nothing is said: a tool may run for minutes (max_total_timeout_ms), and a proxy with an
// idle timeout would cut a stream that stays silent that long.
import type { SseEvent } from "../sse/parse.ts";

/** Silence after which a keep-alive goes out (proxies' idle timeouts are commonly 30-60 s). */
export const KEEP_ALIVE_MS = 15_000;

/** `: keep-alive`: valid SSE that every client ignores. */
export const KEEP_ALIVE: SseEvent = { comment: "keep-alive", data: "" };

export class LiveEvents {
  private items: SseEvent[] = [];
  private wake?: () => void;

  push(ev: SseEvent): void {
    this.items.push(ev);
    this.wake?.();
  }

  /** The events pushed so far, taken. */
  take(): SseEvent[] {
    return this.items.splice(0);
  }

  /** Yield what is pushed while `work` runs, as it comes (a keep-alive after each `keepAliveMs` of silence); its result. */
  async *during<T>(work: Promise<T>, keepAliveMs = KEEP_ALIVE_MS): AsyncGenerator<SseEvent, T> {
    let outcome: { ok: true; value: T } | { ok: false; error: unknown } | undefined;
    const settled = work.then((value) => { outcome = { ok: true, value }; }, (error) => { outcome = { ok: false, error }; });
    for (;;) {
      yield* this.take();
      if (outcome) break;
      if (this.items.length) continue; // pushed while the consumer held the last one
      let timer: NodeJS.Timeout | undefined;
      const silent = await Promise.race([
        settled.then(() => false),
        new Promise<boolean>((r) => { this.wake = () => r(false); }),
        new Promise<boolean>((r) => { timer = setTimeout(() => r(true), keepAliveMs); }),
      ]);
      clearTimeout(timer);
      this.wake = undefined;
      if (silent && !outcome) yield KEEP_ALIVE;
    }
    yield* this.take();
    const done = outcome!;
    if (!done.ok) throw done.error;
    return done.value;
  }
}
