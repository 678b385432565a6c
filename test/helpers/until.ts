// Waiting in end-to-end tests for something another process does (a store back up, a spool replayed, a record landed).

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** The first value `f` gives that is not undefined (a throw counts as not yet), polled every `everyMs` for up to `ms`. */
export async function until<T>(what: string, f: () => Promise<T | undefined>, ms = 20_000, everyMs = 50): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}
