// Short-lived values the gateway keeps between one request and a later one of the same project: the signed reasoning
// of a Claude turn, for a chat client that drops it when it sends the turn back (openai runTools), keyed by the
// turn's tool-call id. A value is small (bounded by its writer), written once, read a few times, then expires.

export interface MemoStore {
  /** Keep `value` under `key` for `ttlMs` (replacing what was there). */
  put(key: string, value: string, ttlMs: number, now: number): Promise<void>;
  /** The live values of these keys (absent ones are left out). */
  get(keys: string[], now: number): Promise<Map<string, string>>;
}
