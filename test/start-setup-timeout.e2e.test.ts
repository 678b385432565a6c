// After "refusing to start: plugin x setup failed: did not finish within 60 s" the process did not exit: the setup it
// gave up on still held a socket and a timer, and start only set the exit code. A refused start now exits 1. The
// bound is shortened as core/pipeline/setup-bound.test.ts does (Gateway.create's pluginSetupTimeoutMs), in a wrapper
// that then runs the CLI's own main.
import { describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { writePluginConfig } from "./helpers/plugin-config.ts";

const dir = mkdtempSync(join(tmpdir(), "mg-setup-timeout-"));
// A license check that never answers: a listening socket and a timer stay open, and the setup never settles.
writeFileSync(join(dir, "licensed.mjs"), `import { createServer } from "node:net";
export default { name: "licensed", handle: (ctx, next) => next(),
  setup() { createServer().listen(0, "127.0.0.1"); setInterval(() => {}, 1000); return new Promise(() => {}); } };
`);
const file = writePluginConfig(join(dir, "gateway.yaml"), { licensed: { module: join(dir, "licensed.mjs") } }, ["auth", "licensed", "router"]);
const url = (p: string) => pathToFileURL(resolve(p)).href;
writeFileSync(join(dir, "start.mjs"), `import { Gateway } from ${JSON.stringify(url("core/gateway.ts"))};
const create = Gateway.create;
Gateway.create = (config, opts = {}) => create.call(Gateway, config, { ...opts, pluginSetupTimeoutMs: 200 });
const { main } = await import(${JSON.stringify(url("core/cli.ts"))});
await main(["start", "--config", ${JSON.stringify(file)}, "--port", "0", "--host", "127.0.0.1", "--no-watch"]);
`);

describe("a start refused because a plugin's setup did not finish", () => {
  it("exits 1 after saying why, though the abandoned setup still holds a socket and a timer", async () => {
    const proc = spawn(process.execPath, ["--import", "tsx", join(dir, "start.mjs")], { stdio: ["ignore", "pipe", "pipe"] });
    let err = "";
    proc.stderr!.on("data", (d) => (err += d));
    const exit = new Promise<number | string | null>((r) => proc.once("exit", (code, signal) => r(signal ?? code)));
    // Said as soon as the bound passes; a process that then stays alive is the defect.
    const refused = new Promise<void>((r) => proc.stderr!.on("data", () => err.includes("refusing to start") && r()));
    await Promise.race([refused, exit]);
    const stillAlive = new Promise<string>((r) => setTimeout(() => r("still running 20 s after refusing"), 20_000).unref());
    try {
      expect(await Promise.race([exit, stillAlive]), err).toBe(1);
    } finally {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGKILL");
    }
    expect(err).toContain("refusing to start: plugin licensed setup failed: did not finish within 0.2 s");
  }, 60_000);
});
