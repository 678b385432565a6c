// Two processes that share a spool directory write the epoch file at the same moment (replicas or workers starting
// together): neither may fail, and the file always parses.
import { describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readEpochs } from "./epoch-file.ts";

const writer = (file: string, name: string) => `
  const { writeEpochs } = await import(${JSON.stringify(new URL("./epoch-file.ts", import.meta.url).href)});
  for (let i = 0; i < 300; i++) writeEpochs(${JSON.stringify(file)}, { [${JSON.stringify(name)}]: String(i) });
`;

function run(code: string): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", code], { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    p.stderr.on("data", (d) => (stderr += d));
    p.on("close", (code) => resolve({ code, stderr }));
  });
}

describe("epoch file", () => {
  it("two processes writing it at once both succeed, and it is whole afterwards", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mg-epochs-"));
    const file = join(dir, "spool", "store-epochs.json");
    const results = await Promise.all([run(writer(file, "a")), run(writer(file, "b")), run(writer(file, "c"))]);
    expect(results.map((r) => r.stderr)).toEqual(["", "", ""]);
    expect(results.map((r) => r.code)).toEqual([0, 0, 0]);
    expect(Object.values(readEpochs(file))).toEqual(["299"]);
    expect(readdirSync(join(dir, "spool"))).toEqual(["store-epochs.json"]); // no temporary file left behind
  }, 30_000);
});
