// The slice of better-sqlite3's API this store uses (the package ships no types; @types/better-sqlite3 is not a dependency).
declare module "better-sqlite3" {
  namespace Database {
    interface RunResult { changes: number; lastInsertRowid: number | bigint }
    interface Statement {
      run(...params: unknown[]): RunResult;
      get(...params: unknown[]): unknown;
      all(...params: unknown[]): unknown[];
      safeIntegers(on?: boolean): Statement;
    }
    interface Database {
      readonly open: boolean;
      prepare(sql: string): Statement;
      exec(sql: string): Database;
      pragma(sql: string, opts?: { simple?: boolean }): unknown;
      transaction<F extends (...args: any[]) => any>(fn: F): F & { deferred: F; immediate: F; exclusive: F };
      close(): Database;
    }
  }
  const Database: new (path: string, options?: { readonly?: boolean; fileMustExist?: boolean; timeout?: number }) => Database.Database;
  export default Database;
}
