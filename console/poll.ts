// Live figures: load now, then again every `intervalMs` after the previous answer, only while the tab is visible (a
// hidden tab asks nothing; showing it again loads at once). Never two requests of one poll at a time.
import { useCallback, useEffect, useRef, useState } from "preact/hooks";

export interface Polled<T> {
  data?: T;
  error?: string;
  /** When the last answer came. */
  at?: number;
  refresh(): void;
}

export function usePoll<T>(load: (signal: AbortSignal) => Promise<T>, intervalMs: number, deps: unknown[], enabled = true): Polled<T> {
  const [state, setState] = useState<{ data?: T; error?: string; at?: number }>({});
  const kick = useRef<() => void>(() => {});
  useEffect(() => {
    if (!enabled) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let ctrl: AbortController | undefined;
    let stopped = false;
    const schedule = () => {
      clearTimeout(timer);
      timer = !stopped && document.visibilityState === "visible" ? setTimeout(run, intervalMs) : undefined;
    };
    const run = async () => {
      clearTimeout(timer);
      timer = undefined;
      ctrl?.abort();
      const mine = (ctrl = new AbortController());
      try {
        const data = await load(mine.signal);
        if (!mine.signal.aborted) setState({ data, at: Date.now() });
      } catch (err) {
        if (!mine.signal.aborted) setState((s) => ({ ...s, error: (err as Error).message }));
      }
      if (ctrl === mine) schedule();
    };
    const onVisibility = () => {
      if (document.visibilityState === "visible") void run();
      else {
        clearTimeout(timer);
        timer = undefined;
        ctrl?.abort();
      }
    };
    kick.current = () => void run();
    document.addEventListener("visibilitychange", onVisibility);
    if (document.visibilityState === "visible") void run();
    return () => {
      stopped = true;
      clearTimeout(timer);
      ctrl?.abort();
      document.removeEventListener("visibilitychange", onVisibility);
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, enabled, intervalMs]);
  const refresh = useCallback(() => kick.current(), []);
  return { ...state, refresh };
}
