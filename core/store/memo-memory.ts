// Memos in this process (store kind memory). Bounded: past MAX_MEMOS the oldest go first, so a flood of writes can
// never grow the heap without limit.
import type { MemoStore } from "./memo-types.ts";

const MAX_MEMOS = 10_000;

export class MemoryMemoStore implements MemoStore {
  private readonly memos = new Map<string, { value: string; expires: number }>();

  async put(key: string, value: string, ttlMs: number, now: number): Promise<void> {
    this.memos.delete(key); // re-inserted last: Map order is the eviction order
    this.memos.set(key, { value, expires: now + ttlMs });
    if (this.memos.size > MAX_MEMOS) {
      for (const k of this.memos.keys()) {
        this.memos.delete(k);
        if (this.memos.size <= MAX_MEMOS) break;
      }
    }
  }

  async get(keys: string[], now: number): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    for (const k of keys) {
      const m = this.memos.get(k);
      if (!m) continue;
      if (m.expires <= now) this.memos.delete(k);
      else out.set(k, m.value);
    }
    return out;
  }
}
