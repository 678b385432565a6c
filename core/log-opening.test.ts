import { EventEmitter } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createLogger } from "./log.ts";
import { logFilesOpened, logFilesStillOpening, opening } from "./log-opening.ts";

describe("log files still opening, awaited before an exit", () => {
  it("waits for a file that has not opened yet, and resolves once it has", async () => {
    const file = new EventEmitter();
    opening(file);
    let done = false;
    const waited = logFilesOpened(5_000).then(() => (done = true));
    await new Promise((r) => setTimeout(r, 30));
    expect(done).toBe(false);
    file.emit("ready");
    await waited;
    expect(done).toBe(true);
  });

  it("a file that failed to open does not hold the exit", async () => {
    const file = new EventEmitter();
    opening(file);
    file.emit("error");
    await logFilesOpened(5_000);
  });

  it("gives up after the bound", async () => {
    const file = new EventEmitter();
    opening(file);
    const t0 = Date.now();
    await logFilesOpened(50);
    expect(Date.now() - t0).toBeLessThan(2_000);
    file.emit("ready");
    await logFilesOpened(5_000);
  });

  it("a logger writing to a file is counted until its file is open (pino's exit flush throws on one still opening)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mg-log-open-"));
    try {
      const log = createLogger({ level: "info", file: join(dir, "gw.log") });
      expect(logFilesStillOpening()).toBe(1);
      await logFilesOpened(5_000);
      expect(logFilesStillOpening()).toBe(0);
      await log.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
