// An installation on Redis that adds `store.ledger: postgres`: its earlier records stay in the Redis ledger stream,
// which nothing reads any more (usage, the admin API and search read Postgres), while budgets still count their
// spend. At start, when the Postgres ledger has no record yet, they are imported once (in batches, in the
// background; only the new ones go in and into the rollups, as a spool replay does, so a replica starting at the same
// time, a restart half way, or a second run count nothing twice). mg_meta.redis_ledger_import keeps the last stream
// entry imported: the next start goes on from there. A Postgres ledger that already holds records (an installation
// that switched before this existed) is left as it is, with a warning saying how to import them.
import type { Logger } from "../log.ts";
import type { LedgerRecord } from "../contracts/ledger-reader.ts";
import type { RedisStore } from "./redis.ts";
import type { PostgresLedger } from "./postgres-ledger.ts";

/** mg_meta's row: the id of the last stream entry imported ("0-0": none yet). */
export const IMPORT_MARK = "redis_ledger_import";
const BATCH = 500;

/** Import what the Redis ledger stream holds past the mark; resolves with the records Postgres took, never rejects. */
export async function importRedisLedger(hot: RedisStore, ledger: PostgresLedger, log?: Logger, stop?: AbortSignal): Promise<number> {
  try {
    const entries = await hot.ledgerLength();
    if (!entries) return 0;
    let after = await ledger.meta(IMPORT_MARK);
    if (after === undefined) {
      if (!(await ledger.isEmpty())) {
        log?.warn(`store: the Redis ledger stream ${hot.ledgerKey} holds ${entries} records from before store.ledger: postgres; ` +
          "usage, request search and the admin API read Postgres, which does not have them (budgets still count their spend). " +
          `To bring them over, run in the ledger's database INSERT INTO mg_meta (name, value) VALUES ('${IMPORT_MARK}', '0-0') ` +
          "and restart a gateway: it imports them once (records already there are skipped)", { stream: hot.ledgerKey, records: entries });
        return 0;
      }
      after = "0-0";
      await ledger.setMeta(IMPORT_MARK, after);
    }
    let imported = 0;
    let read = 0;
    for (;;) {
      if (stop?.aborted) return imported; // the store closes: the next start goes on from the mark
      const batch = await hot.ledgerAfter(after, BATCH);
      if (!batch.length) break;
      if (!read) {
        log?.warn(`store: the Redis ledger stream ${hot.ledgerKey} holds records from before store.ledger: postgres; importing them into ` +
          "Postgres (once: records already there are skipped); until it is done usage and the admin API miss some of them", { stream: hot.ledgerKey, records: entries });
      }
      const records = batch.map((b) => b.record).filter((r): r is LedgerRecord => r !== undefined && typeof r.generationId === "string");
      if (records.length) imported += await ledger.importRecords(records);
      read += batch.length;
      after = batch[batch.length - 1]!.id;
      await ledger.setMeta(IMPORT_MARK, after);
    }
    if (read) log?.info("store: the Redis ledger stream's records are in Postgres", { stream: hot.ledgerKey, read, imported });
    return imported;
  } catch (err) {
    log?.warn(`store: importing the Redis ledger stream ${hot.ledgerKey} into Postgres failed; its records stay in Redis and the next start goes on`, { error: (err as Error).message });
    return 0;
  }
}
