// Tests of what lands before an answer completes: one store call made slow, as a round trip to a remote store (or a
// loaded disk) can be, so work left until after the answer shows in what the client sees next.
import type { Store } from "../../core/store/types.ts";

type Op = "release" | "record" | "rateAdjust";

/** Delay every call of `store[op]` by `ms`; returns the function that restores it. */
export function slowStoreCall(store: Store, op: Op, ms = 300): () => void {
  const calls = store as unknown as Record<Op, (...args: unknown[]) => Promise<unknown>>;
  const original = calls[op];
  calls[op] = async (...args) => {
    await new Promise((r) => setTimeout(r, ms));
    return original.apply(store, args);
  };
  return () => {
    calls[op] = original;
  };
}
