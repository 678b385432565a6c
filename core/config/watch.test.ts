import { afterEach, describe, expect, it } from "vitest";
import { mkdtempSync, renameSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLogger } from "../log.ts";
import { watchConfig, type ConfigWatch } from "./watch.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let w: ConfigWatch | undefined;
afterEach(() => w?.close());

function setup() {
  const dir = mkdtempSync(join(tmpdir(), "mg-watchunit-"));
  const file = join(dir, "gateway.yaml");
  writeFileSync(file, "a: 1\n");
  let calls = 0;
  w = watchConfig({ files: () => [file], onChange: () => void calls++, log: createLogger("silent"), debounceMs: 50 });
  return { dir, file, calls: () => calls };
}

describe("watchConfig", () => {
  it("a burst of writes and replaces is one change", async () => {
    const { dir, file, calls } = setup();
    for (let i = 0; i < 5; i++) {
      writeFileSync(join(dir, `tmp${i}`), `a: ${i + 2}\n`);
      renameSync(join(dir, `tmp${i}`), file);
    }
    await sleep(300);
    expect(calls()).toBe(1);
  });

  it("an event that leaves the content as it was is no change; other files in the directory are ignored", async () => {
    const { dir, file, calls } = setup();
    utimesSync(file, new Date(), new Date());
    writeFileSync(file, "a: 1\n");
    writeFileSync(join(dir, "gateway.db"), "x");
    writeFileSync(join(dir, "access.log"), "x");
    await sleep(300);
    expect(calls()).toBe(0);
    writeFileSync(file, "a: 2\n");
    await sleep(300);
    expect(calls()).toBe(1);
  });

  it("stops after close", async () => {
    const { file, calls } = setup();
    w!.close();
    writeFileSync(file, "a: 3\n");
    await sleep(300);
    expect(calls()).toBe(0);
  });
});
