import { describe, expect, it } from "vitest";
import { describeStore } from "./describe.ts";

describe("describeStore", () => {
  it("names the SQLite file resolved against the config's directory, and says when it is the default", () => {
    expect(describeStore({ kind: "sqlite" }, "/srv/gw", false)).toBe("sqlite /srv/gw/data/gateway.db (the default: the config has no store: section)");
    expect(describeStore({ kind: "sqlite", path: "/var/lib/gw.db" }, "/srv/gw", true)).toBe("sqlite /var/lib/gw.db");
  });

  it("says a memory store loses everything on exit", () => {
    expect(describeStore({ kind: "memory" }, "/srv/gw", true)).toBe("memory (spend, ledger and API-created keys are lost on exit)");
  });

  it("names Redis and a Postgres ledger by host, port and database, never their passwords", () => {
    const text = describeStore({ kind: "redis", url: "redis://:hunter2@cache:6380/2", prefix: "mg:", ledger: { kind: "postgres", url: "postgres://gw:s3cret@db/ledger" } }, "/srv/gw", true);
    expect(text).toBe("redis cache:6380/2 (prefix mg:), ledger postgres db:5432/ledger");
    expect(text).not.toMatch(/hunter2|s3cret/);
  });
});
