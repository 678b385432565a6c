// `model-gateway usage` on a SQLite file, served by a gateway meanwhile (this release or an older one) or not: the
// file is only read, as it is (sqlite-read-only.ts), in one snapshot: the rollups, plus the records still in the
// journal. The command never migrates it — that is the business of the gateway that serves it: a file too old to have
// rollups is reported (the gateway's first start adds them). A file that is not there, or that another process keeps
// locked, is an error naming it: an all-zero table would read as "no traffic", and SQLite's own errors ("database is
// locked", "file is not a database", "disk I/O error" for a directory) name no file, so every one is given its name.
import type Database from "better-sqlite3";
import { existsSync, statSync } from "node:fs";
import { fromRow } from "./sqlite.ts";
import { hasTable, openSqliteReadOnly } from "./sqlite-read-only.ts";
import { SQLITE, scanRow, scanSql } from "./ledger-sql.ts";
import { DAY_MS, HOUR_MS, UsageAccumulator, countsOf, groupMatches, groupOf, planUsage } from "./rollup.ts";
import type { UsageQuery, UsageRow } from "../contracts/ledger-reader.ts";

export interface UsageSource {
  usage(q: UsageQuery): Promise<UsageRow[]>;
  close(): Promise<void>;
}

/**
 * The usage reader of the SQLite file at `path` (absolute), which must be there (none is made); `origin` says where
 * the path came from (store.path in which file), for the error when it is not.
 */
export function openSqliteForReport(path: string, busyTimeoutMs: number, origin?: string): UsageSource {
  if (path === ":memory:") throw new Error('the SQLite store is in memory (store.path ":memory:"): its ledger lives only inside the running gateway');
  if (!existsSync(path)) {
    throw new Error(`no SQLite file at ${path}${origin ? ` (${origin})` : ""}: a gateway makes it when it first starts on this config; if one is running, it serves another file`);
  }
  // SQLite says only "disk I/O error" for a directory.
  if (statSync(path).isDirectory()) throw new Error(`cannot read ${path}: it is a directory, not a SQLite file${origin ? ` (${origin})` : ""}`);
  return new SqliteReport(path, busyTimeoutMs);
}

/** A failure to open or read the file, with the file named (SQLite's messages name none); "locked" says what to do. */
function named(path: string, busyTimeoutMs: number, err: unknown): unknown {
  const message = (err as Error)?.message ?? String(err);
  if (message.includes(path)) return err; // ours, or explained already (sqlite-read-only.ts)
  const code = (err as { code?: unknown })?.code;
  const locked = typeof code === "string" && /^SQLITE_(BUSY|LOCKED)/.test(code);
  const advice = locked ? `: another process kept it locked past this command's wait (${busyTimeoutMs / 1000} s); try again once it lets go` : "";
  return Object.assign(new Error(`cannot read ${path}: ${message}${advice}`, { cause: err }), code === undefined ? {} : { code });
}

/** A SQLite file, read only: never created, migrated or written to. */
export class SqliteReport implements UsageSource {
  private readonly db: Database.Database;

  constructor(private readonly path: string, private readonly busyTimeoutMs: number) {
    try {
      this.db = openSqliteReadOnly(path, busyTimeoutMs);
    } catch (err) {
      throw named(path, busyTimeoutMs, err);
    }
  }

  async usage(q: UsageQuery): Promise<UsageRow[]> {
    try {
      return this.read(q);
    } catch (err) {
      throw named(this.path, this.busyTimeoutMs, err);
    }
  }

  private read(q: UsageQuery): UsageRow[] {
    const p = planUsage(q);
    if (!hasTable(this.db, "ledger_hourly")) {
      throw new Error(`the SQLite file ${this.path} is from a release without usage rollups, and usage only reads a file as it is: ` +
        "start the gateway (this release) on it once, which adds them, then ask again");
    }
    const acc = new UsageAccumulator(p);
    const journal = hasTable(this.db, "ledger_journal") ? this.db.prepare("SELECT * FROM ledger_journal WHERE ts >= ? AND ts < ?").safeIntegers(true) : undefined;
    const ledger = this.db.prepare("SELECT * FROM ledger WHERE ts >= ? AND ts < ?").safeIntegers(true);
    const addRecords = (rows: unknown[], ms: number) => {
      for (const row of rows) {
        const e = fromRow(row);
        const g = groupOf(e);
        if (groupMatches(p, g)) acc.add(Math.floor(e.ts / ms) * ms, g, countsOf(e));
      }
    };
    // One snapshot: a record the gateway moves from the journal into the rollups meanwhile is counted once.
    this.db.transaction(() => {
      const stale = this.staleBuckets();
      for (const scan of p.scans) {
        const ms = scan.table === "hour" ? HOUR_MS : DAY_MS;
        const skip = [...stale[scan.table]].filter((b) => b >= scan.from && b < scan.to);
        // The rollups, but for the buckets they may miss rows of: those are summed from the ledger instead.
        const table = `${scan.table === "hour" ? SQLITE.hourly : SQLITE.daily}${skip.length ? ` WHERE bucket NOT IN (${skip.join(", ")})` : ""}`;
        const dialect = { ...SQLITE, hourly: `(SELECT * FROM ${table})`, daily: `(SELECT * FROM ${table})` };
        const { sql, params } = scanSql(dialect, p, scan);
        for (const r of this.db.prepare(sql).safeIntegers(true).all(...params) as Record<string, unknown>[]) {
          const { b, group, c } = scanRow(p, r);
          acc.add(b, group, c);
        }
        for (const b of skip) addRecords(ledger.all(b, b + ms), ms);
        // Records not moved into the ledger yet (a serving gateway moves them within ~0.1 s): not in the rollups.
        addRecords(journal?.all(scan.from, scan.to) ?? [], ms);
      }
    })();
    return acc.result();
  }

  /**
   * The hours and days holding ledger rows past the rollups' high-water mark (meta.rollup_rowid): rows an older
   * release added since this one last served the file, which its rollups may miss (a gateway's open sums them again;
   * this reader may not write, so it sums them itself). A file without the mark is read from its rollups as they are.
   */
  private staleBuckets(): Record<"hour" | "day", Set<number>> {
    const out = { hour: new Set<number>(), day: new Set<number>() };
    const mark = hasTable(this.db, "meta") ? (this.db.prepare("SELECT value FROM meta WHERE name = 'rollup_rowid'").get() as { value: string } | undefined)?.value : undefined;
    if (mark === undefined || !/^\d+$/.test(mark)) return out;
    for (const { ts } of this.db.prepare("SELECT ts FROM ledger WHERE rowid > ?").all(BigInt(mark)) as { ts: number }[]) {
      out.hour.add(Math.floor(ts / HOUR_MS) * HOUR_MS);
      out.day.add(Math.floor(ts / DAY_MS) * DAY_MS);
    }
    return out;
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
