import { afterEach, describe, expect, it } from "vitest";
import { closeSync, mkdtempSync, openSync, readFileSync, renameSync, utimesSync, writeFileSync, writeSync } from "node:fs";
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
  w = watchConfig({ files: () => [file], onChange: () => void calls++, log: createLogger("silent"), debounceMs: 50, quietMs: 100 });
  return { dir, file, calls: () => calls };
}

/** A watch that records the file's content at each change, with a quiet time the tests' pauses stay under. */
function watched() {
  const dir = mkdtempSync(join(tmpdir(), "mg-watchunit-"));
  const file = join(dir, "gateway.yaml");
  writeFileSync(file, "a: 1\n");
  const seen: string[] = [];
  w = watchConfig({ files: () => [file], onChange: () => void seen.push(readFileSync(file, "utf8")), log: createLogger("silent"), debounceMs: 50, quietMs: 600 });
  return { file, seen };
}

async function until(what: string, check: () => boolean): Promise<void> {
  for (const end = Date.now() + 10_000; !check(); await sleep(25)) if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
}

describe("watchConfig", () => {
  it("a burst of writes and replaces is one change", async () => {
    const { dir, file, calls } = setup();
    for (let i = 0; i < 5; i++) {
      writeFileSync(join(dir, `tmp${i}`), `a: ${i + 2}\n`);
      renameSync(join(dir, `tmp${i}`), file);
    }
    // The change, however late a loaded machine reads its events (a fixed 300 ms could pass first); then a while
    // for a second one to show.
    await until("the change", () => calls() > 0);
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
    await until("the change", () => calls() > 0); // however late a loaded machine reads its events
    await sleep(300);
    expect(calls()).toBe(1);
  });

  // A file written in place is cut short until its writer is done: read meanwhile, it parses (a prefix of a map is a
  // map) and would drop every project or key after the cut. It is acted on once it has stayed the same a while.
  it("a file written in place with a pause mid-way is acted on once, whole", async () => {
    const { file, seen } = watched();
    const fd = openSync(file, "w");
    writeSync(fd, "a: 2\n");
    // Longer than the debounce, shorter than the quiet time. A loaded machine cannot stretch it past the quiet time:
    // both are timers of this process, fired in the order they are due however late, and this one is due first.
    await sleep(300);
    writeSync(fd, "b: 2\n");
    closeSync(fd);
    await until("the change", () => seen.length > 0);
    await sleep(700);
    expect(seen).toEqual(["a: 2\nb: 2\n"]);
  });

  it("a slow writer, still writing long after its first line, is acted on once, when it is done", async () => {
    const { file, seen } = watched();
    const fd = openSync(file, "w");
    for (let i = 0; i < 40; i++) {
      writeSync(fd, `k${i}: ${i}\n`);
      await sleep(40);
    }
    closeSync(fd);
    await until("the change", () => seen.length > 0);
    await sleep(700);
    expect(seen).toEqual([Array.from({ length: 40 }, (_, i) => `k${i}: ${i}\n`).join("")]);
  });

  it("stops after close", async () => {
    const { file, calls } = setup();
    w!.close();
    writeFileSync(file, "a: 3\n");
    await sleep(300);
    expect(calls()).toBe(0);
  });
});

// A gateway reads its config long before it watches it (plugin imports, store connect, listen), and a worker joining
// a cluster loads the others' texts: an edit written in between must reload, or that process serves the old config
// until the next edit while the others serve the new one.
describe("watchConfig measures from the texts the serving config was loaded from", () => {
  function started(onDisk: string, served: string, writtenAgoMs: number) {
    const dir = mkdtempSync(join(tmpdir(), "mg-watchunit-"));
    const file = join(dir, "gateway.yaml");
    writeFileSync(file, onDisk);
    const at = new Date(Date.now() - writtenAgoMs);
    utimesSync(file, at, at);
    const seen: string[] = [];
    w = watchConfig({
      files: () => [file], served: { [file]: served }, onChange: () => void seen.push(readFileSync(file, "utf8")),
      log: createLogger("silent"), debounceMs: 50, quietMs: 600,
    });
    return { seen };
  }

  it("an edit written after the load read the file, before the watch began, is reloaded at once", async () => {
    const { seen } = started("a: 2\n", "a: 1\n", 5000);
    await until("the edit to be reloaded", () => seen.length > 0);
    expect(seen).toEqual(["a: 2\n"]);
    await sleep(300);
    expect(seen).toHaveLength(1);
  });

  it("one written just now waits for the quiet time, as any change does", async () => {
    const { seen } = started("a: 2\n", "a: 1\n", 0);
    await sleep(300);
    expect(seen).toEqual([]);
    await until("the edit to be reloaded", () => seen.length > 0);
    expect(seen).toEqual(["a: 2\n"]);
  });

  it("the file as loaded is no change", async () => {
    const { seen } = started("a: 1\n", "a: 1\n", 5000);
    await sleep(300);
    expect(seen).toEqual([]);
  });
});
