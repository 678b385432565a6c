import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { StoreInUseError, holdServingLock } from "./sqlite-process-lock.ts";

/** Another process holding the serving lock of `db` until killed; resolves once it holds it. */
async function otherProcessHolding(db: string) {
  const child = spawn(process.execPath, ["--import", "tsx", "-e",
    `const { holdServingLock } = await import(${JSON.stringify(join(import.meta.dirname, "sqlite-process-lock.ts"))}); holdServingLock(${JSON.stringify(db)}); console.log("held"); setInterval(() => {}, 1000);`],
    { stdio: ["ignore", "pipe", "inherit"] });
  await new Promise<void>((resolve, reject) => {
    child.stdout.on("data", (d) => String(d).includes("held") && resolve());
    child.once("exit", (code) => reject(new Error(`holder exited ${code}`)));
  });
  return child;
}

describe("the serving lock of a SQLite file", () => {
  it("refuses a second holder while one holds it, in this process or another, and is free again once released", () => {
    const db = join(mkdtempSync(join(tmpdir(), "mg-lock-")), "gateway.db");
    const held = holdServingLock(db);
    expect(() => holdServingLock(db)).toThrow(StoreInUseError);
    held.release();
    holdServingLock(db).release();
  });

  it("a process killed with SIGKILL leaves nothing behind: the next one gets the lock", async () => {
    const db = join(mkdtempSync(join(tmpdir(), "mg-lock-")), "gateway.db");
    const other = await otherProcessHolding(db);
    try {
      expect(() => holdServingLock(db)).toThrow(/another gateway process is serving .*gateway\.db: one process per SQLite file/);
    } finally {
      other.kill("SIGKILL");
      await new Promise((r) => other.once("exit", r));
    }
    holdServingLock(db).release();
  }, 30_000);
});
