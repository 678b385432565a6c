// An installation on Redis that adds `store.ledger: postgres`: its earlier records stay in the Redis ledger stream,
// which nothing reads any more (usage, the admin API and search read Postgres), while budgets still count their
// spend. Whether they are imported is decided once, at the first contact with the Postgres ledger: one with no record
// yet gets the mark mg_meta.redis_ledger_import = '0-0' (postgres-schema.ts, in the transaction that looked), so
// records spooled afterwards — a first start while Postgres was down — do not change the answer. A serving gateway
// then imports the stream past the mark in the background, under a Postgres advisory lock: one process at a time
// (the others skip it), moving the mark with every batch, so a holder that dies leaves the rest to the next start.
// Only new generation ids go in and into the rollups, as a spool replay, so nothing is counted twice. A Postgres
// ledger that already held records at its first contact (an installation that switched before this existed) gets no
// mark and is left as it is, with a warning saying how to import them.
import { setTimeout as sleep } from "node:timers/promises";
import type { Logger } from "../log.ts";
import type { LedgerRecord } from "../contracts/ledger-reader.ts";
import type { RedisStore } from "./redis.ts";
import type { PostgresLedger } from "./postgres-ledger.ts";
import { IMPORT_MARK } from "./postgres-schema.ts";

export { IMPORT_MARK };
const BATCH = 500;
/** After a failure (Postgres or Redis down), the import is tried again this long after. */
const RETRY_MS = 60_000;

/**
 * Import what the Redis ledger stream holds past the mark, trying again every `retryMs` while it fails, until done
 * or `stop`; resolves with the records Postgres took, never rejects.
 */
export async function importRedisLedger(hot: RedisStore, ledger: PostgresLedger, log?: Logger, stop?: AbortSignal, retryMs = RETRY_MS): Promise<number> {
  let imported = 0;
  for (;;) {
    try {
      await importOnce(hot, ledger, log, stop, (n) => void (imported += n));
      return imported;
    } catch (err) {
      if (stop?.aborted) return imported;
      log?.warn(`store: importing the Redis ledger stream ${hot.ledgerKey} into Postgres failed; its records stay in Redis, ` +
        `and the import is tried again in ${Math.round(retryMs / 1000)} s (and at the next start)`, { error: (err as Error).message });
      try {
        await sleep(retryMs, undefined, { signal: stop, ref: false });
      } catch {
        return imported; // the store closes
      }
    }
  }
}

/** One attempt; `counted` hears each batch's records Postgres took (so one that fails half way still counts them). */
async function importOnce(hot: RedisStore, ledger: PostgresLedger, log: Logger | undefined, stop: AbortSignal | undefined, counted: (n: number) => void): Promise<void> {
  const entries = await hot.ledgerLength();
  if (!entries) return;
  await ledger.ready(); // the mark is decided there
  const done = await ledger.withImportLock(async () => {
    let after = await ledger.meta(IMPORT_MARK);
    if (after === undefined) {
      log?.warn(`store: the Redis ledger stream ${hot.ledgerKey} holds ${entries} records from before store.ledger: postgres; ` +
        "usage, request search and the admin API read Postgres, which does not have them (budgets still count their spend). " +
        `To bring them over, run in the ledger's database INSERT INTO mg_meta (name, value) VALUES ('${IMPORT_MARK}', '0-0') ` +
        "and restart a gateway: it imports them once (records already there are skipped)", { stream: hot.ledgerKey, records: entries });
      return true;
    }
    let imported = 0;
    let read = 0;
    for (;;) {
      if (stop?.aborted) return true; // the store closes: the next start goes on from the mark
      const batch = await hot.ledgerAfter(after, BATCH);
      if (!batch.length) break;
      if (!read) {
        log?.warn(`store: the Redis ledger stream ${hot.ledgerKey} holds records from before store.ledger: postgres; importing them into ` +
          "Postgres (once: records already there are skipped); until it is done usage and the admin API miss some of them", { stream: hot.ledgerKey, records: entries });
      }
      const records = batch.map((b) => b.record).filter((r): r is LedgerRecord => r !== undefined && typeof r.generationId === "string");
      const n = records.length ? await ledger.importRecords(records) : 0;
      imported += n;
      counted(n);
      read += batch.length;
      after = batch[batch.length - 1]!.id;
      await ledger.setMeta(IMPORT_MARK, after);
    }
    if (read) log?.info("store: the Redis ledger stream's records are in Postgres", { stream: hot.ledgerKey, read, imported });
    return true;
  });
  if (done === undefined) {
    log?.info("store: another gateway is importing the Redis ledger stream into Postgres; this one leaves it to that one " +
      "(should it stop half way, the next gateway to start goes on from where it got to)", { stream: hot.ledgerKey });
  }
}
