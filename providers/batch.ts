// Split a large input list into the batches an upstream accepts (by count and, optionally, by estimated tokens),
// run them with bounded concurrency and put the results back together in the original order.

export interface BatchLimits {
  maxItems: number;
  /** Most (estimated) tokens per request. */
  maxTokens?: number;
  concurrency?: number;
}

export function planBatches<T>(items: T[], limits: BatchLimits, cost: (item: T) => number = () => 0): T[][] {
  const out: T[][] = [];
  let cur: T[] = [];
  let tokens = 0;
  for (const item of items) {
    const c = limits.maxTokens ? cost(item) : 0;
    if (cur.length && (cur.length >= limits.maxItems || (limits.maxTokens && tokens + c > limits.maxTokens))) {
      out.push(cur);
      cur = [];
      tokens = 0;
    }
    cur.push(item);
    tokens += c;
  }
  if (cur.length) out.push(cur);
  return out;
}

/** Runs every batch (at most `concurrency` at once) and concatenates their results in batch order. */
export async function runBatches<T, R>(batches: T[][], run: (batch: T[]) => Promise<R[]>, concurrency = 4): Promise<R[]> {
  const results: R[][] = new Array(batches.length);
  let next = 0;
  const worker = async () => {
    while (next < batches.length) {
      const i = next++;
      results[i] = await run(batches[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, batches.length) }, worker));
  return results.flat();
}
