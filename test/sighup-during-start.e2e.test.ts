// A SIGHUP that reached `model-gateway start` before it listened (a config tool signalling a gateway it had just
// restarted) killed it: SIGHUP's default action, exit 129. It is now noted from the start, and a reload asked for
// before the gateway listened is done once it does, so the file as it was when signalled is the one serving.
import { afterEach, describe, expect, it, vi } from "vitest";
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import YAML from "yaml";
import { builtins } from "../core/builtins.ts";

const BIN = resolve("bin/model-gateway.mjs");
const SANDBOX = "mg_test_quickstart_sandbox_key_0001";
const dir = mkdtempSync(join(tmpdir(), "mg-hup-start-"));
const started = join(dir, "setup-started");
const go = join(dir, "go");
// Its setup says it has begun, then waits for the test to let it finish: the gateway is mid-start, not listening.
writeFileSync(join(dir, "gate.mjs"), `import { existsSync, writeFileSync } from "node:fs";
export default { name: "gate", handle: (ctx, next) => next(),
  setup() {
    writeFileSync(${JSON.stringify(started)}, "");
    return new Promise((done) => { const t = setInterval(() => { if (existsSync(${JSON.stringify(go)})) { clearInterval(t); done({}); } }, 20); });
  } };
`);
const file = join(dir, "gateway.yaml");
const config = (models: string[]) => YAML.stringify({
  store: { kind: "memory" },
  metrics: { listener: false },
  providers: { sim: { protocol: "sim" } },
  models: Object.fromEntries(models.map((m) => [`sim/${m}`, { endpoints: [{ provider: "sim", model: "echo" }] }])),
  projects: { demo: { keys: [{ id: "k", sha256: "8d73c889f7b0cdb4f6d43d374791ef31c60f88765de7577cc2fcd01d6496d345" }] } },
  plugins: { gate: { module: join(dir, "gate.mjs") } },
  pipeline: ["auth", "gate", ...builtins.defaultPipeline().filter((n) => n !== "auth")],
});

let proc: ChildProcess | undefined;
afterEach(async () => {
  if (proc && proc.exitCode === null && proc.signalCode === null) {
    const gone = new Promise((r) => proc!.once("exit", r));
    proc.kill("SIGTERM");
    await gone;
  }
});

describe("SIGHUP before the gateway listens", () => {
  it("does not kill the start; the reload it asked for is done once the gateway listens", async () => {
    writeFileSync(file, config(["one"]));
    proc = spawn(process.execPath, [BIN, "start", "--config", file, "--port", "0", "--host", "127.0.0.1", "--no-watch"], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    proc.stdout!.on("data", (d) => (out += d));
    proc.stderr!.on("data", (d) => (out += d));
    const exit = new Promise<string>((r) => proc!.once("exit", (code, signal) => r(`exited (${signal ?? code}):\n${out}`)));
    const listening = new Promise<string>((r) => proc!.stdout!.on("data", () => { const m = /listening on (http:\/\/\S+)/.exec(out); if (m) r(m[1]!); }));

    await vi.waitFor(() => expect(existsSync(started)).toBe(true), { timeout: 30_000, interval: 20 });
    writeFileSync(file, config(["one", "two"])); // the edit the signal announces, made after the start read the file
    proc.kill("SIGHUP");
    // The signal has landed (noted, or the process is gone) while setup still waits; then setup may finish.
    const noted = vi.waitFor(() => expect(out).toContain("SIGHUP before the gateway listened"), { timeout: 30_000, interval: 20 }).then(() => "noted");
    expect(await Promise.race([exit, noted])).toBe("noted");
    writeFileSync(go, "");

    const url = await Promise.race([listening, exit]);
    expect(url, url).toMatch(/^http:\/\//);
    const ask = (model: string) => fetch(`${url}/api/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${SANDBOX}`, "content-type": "application/json" },
      body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }] }),
    }).then((r) => r.status);
    await vi.waitFor(async () => expect(await ask("sim/two")).toBe(200), { timeout: 30_000, interval: 50 });
    expect(proc.exitCode).toBeNull();
  }, 60_000);
});
