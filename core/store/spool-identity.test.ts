import { describe, expect, it } from "vitest";
import { mkdtempSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { storeSpoolTag } from "./spool-identity.ts";
import { postgresSpoolTag } from "./spool-tag.ts";

describe("spool store tags", () => {
  it("names the store, not the config: two SQLite files differ; one file reached by another path does not", () => {
    const dir = mkdtempSync(join(tmpdir(), "mg-tag-"));
    symlinkSync(dir, join(dir, "..", `${dir.split("/").pop()}-link`));
    const a = storeSpoolTag({ kind: "sqlite", path: "a.db" }, dir);
    expect(a).toMatch(/^sqlite-[0-9a-f]{12}$/);
    expect(storeSpoolTag({ kind: "sqlite", path: "b.db" }, dir)).not.toBe(a);
    expect(storeSpoolTag({ kind: "sqlite", path: join(dir, "a.db") }, "/elsewhere")).toBe(a);
    expect(storeSpoolTag({ kind: "sqlite", path: "a.db" }, `${dir}-link`)).toBe(a);
    // The default path is the config's directory's ./data/gateway.db: two directories, two stores.
    expect(storeSpoolTag({ kind: "sqlite" }, dir)).not.toBe(storeSpoolTag({ kind: "sqlite" }, `${dir}/x`));
  });

  it("Redis: host, db and prefix name the store, the password does not (and is not in the tag)", () => {
    const t = storeSpoolTag({ kind: "redis", url: "redis://:s3cret@cache:6379/0" }, "/");
    expect(t).toMatch(/^redis-[0-9a-f]{12}$/);
    expect(storeSpoolTag({ kind: "redis", url: "redis://:other@cache:6379" }, "/")).toBe(t);
    expect(storeSpoolTag({ kind: "redis", url: "redis://cache:6379/1" }, "/")).not.toBe(t);
    expect(storeSpoolTag({ kind: "redis", url: "redis://cache:6379/0", prefix: "b:" }, "/")).not.toBe(t);
    const split = storeSpoolTag({ kind: "redis", url: "redis://cache:6379/0", ledger: { kind: "postgres", url: "postgres://u:p@db/one" } } as any, "/");
    expect(split).toMatch(/^redispg-/);
    expect(storeSpoolTag({ kind: "redis", url: "redis://cache:6379/0", ledger: { kind: "postgres", url: "postgres://db/two" } } as any, "/")).not.toBe(split);
  });

  it("Postgres: the database, whoever connects", () => {
    expect(postgresSpoolTag("postgres://a:x@db:5432/ledger")).toBe(postgresSpoolTag("postgres://b:y@DB/ledger"));
    expect(postgresSpoolTag("postgres://db/ledger")).not.toBe(postgresSpoolTag("postgres://db/other"));
  });

  it("a memory store's tag is its own process's", () => {
    expect(storeSpoolTag({ kind: "memory" }, "/")).toMatch(/^memory-/);
  });
});
