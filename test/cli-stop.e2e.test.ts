// Stopping the gateway through npm: `npm start` and `npx model-gateway` run it as npm → sh -c → node, and npm
// passes SIGTERM / SIGINT only to its direct child. Whatever the wrapper, signalling npm must stop the gateway
// (its graceful shutdown) and free the port — never leave an orphan holding it.
import { afterEach, describe, expect, it } from "vitest";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import YAML from "yaml";
import { freePort, portTaken } from "./helpers/ports.ts";
import { startRedis } from "./helpers/redis.ts";
import { startChildGateway } from "./helpers/child-gateway.ts";
import { startFakeOpenAI } from "./upstreams/openai.ts";
import { auth, chat, policyConfig } from "./helpers/policy-config.ts";
import { RedisStore } from "../core/store/redis.ts";

const ROOT = resolve(".");
const BIN = join(ROOT, "bin/model-gateway.mjs");

/** This process's environment without what an enclosing `npm test` put there, and npm kept quiet and offline. */
function npmEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^npm_/i.test(k)) env[k] = v;
  return { ...env, npm_config_update_notifier: "false", npm_config_fund: "false", npm_config_audit: "false", npm_config_offline: "true", LOG_LEVEL: "info" };
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const portOpen = (port: number) => new Promise<boolean>((r) => {
  const s = connect(port, "127.0.0.1");
  s.once("connect", () => (s.destroy(), r(true)));
  s.once("error", () => r(false));
});

async function until(what: string, check: () => boolean | Promise<boolean>, ms = 15_000): Promise<void> {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 100))) if (await check()) return;
  throw new Error(`timed out waiting for ${what}`);
}

const gateways: number[] = [];
afterEach(() => {
  // An orphan left by a failing run must not outlive the test.
  for (const pid of gateways.splice(0)) if (alive(pid)) process.kill(pid, "SIGKILL");
});

/**
 * Run npm with the args for a free port, wait for the gateway's banner; its pid comes from the banner. A port that a
 * test file beside this one took before the gateway listened is tried again on another.
 */
async function launch(args: (port: number) => string[], cwd: string): Promise<{ npm: ChildProcess; gateway: number; port: number; out: () => string; exit: Promise<unknown> }> {
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    const npm = spawn("npm", args(port), { cwd, env: npmEnv(), stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    npm.stdout!.on("data", (d) => (out += d));
    npm.stderr!.on("data", (d) => (out += d));
    const exit = new Promise((r) => npm.once("exit", r));
    const closed = new Promise((r) => npm.once("close", r)); // after "exit", once its output is all read
    const gateway = await Promise.race([
      new Promise<number>((r) => npm.stdout!.on("data", () => {
        const m = out.match(/listening on http:\/\/127\.0\.0\.1:(\d+) \(config .*; pid (\d+)\)/);
        if (m) r(Number(m[2]));
      })),
      exit.then(() => closed).then(() => undefined),
    ]);
    if (gateway === undefined) {
      if (attempt < 2 && portTaken(out)) continue;
      throw new Error(`npm exited before the gateway listened:\n${out}`);
    }
    gateways.push(gateway);
    expect(await portOpen(port)).toBe(true);
    return { npm, gateway, port, out: () => out, exit };
  }
}

function config(): string {
  const dir = mkdtempSync(join(tmpdir(), "mg-cli-stop-"));
  writeFileSync(join(dir, "gateway.yaml"), "store: { kind: memory }\n");
  return join(dir, "gateway.yaml");
}

describe("stopping the gateway through npm", () => {
  it.each(["SIGTERM", "SIGINT"] as const)("npm start: %s to npm reaches the gateway, which shuts down gracefully and frees its port", async (signal) => {
    const run = await launch((port) => ["start", "--", "--config", config(), "--port", String(port), "--host", "127.0.0.1", "--no-watch"], ROOT);
    // No shell left between npm and the gateway.
    expect(Number(readFileSync(`/proc/${run.gateway}/stat`, "utf8").split(") ")[1]!.split(" ")[1])).toBe(run.npm.pid);
    run.npm.kill(signal);
    await run.exit;
    await until("the gateway to exit", () => !alive(run.gateway));
    expect(await portOpen(run.port)).toBe(false);
    expect(run.out()).toContain('"shutdown complete"');
  }, 60_000);

  it("npx model-gateway: SIGTERM to npx stops the gateway behind its shell too", async () => {
    // A project that has the gateway installed: npx finds node_modules/.bin/model-gateway, no registry involved.
    const project = mkdtempSync(join(tmpdir(), "mg-npx-"));
    mkdirSync(join(project, "node_modules", ".bin"), { recursive: true });
    symlinkSync(BIN, join(project, "node_modules", ".bin", "model-gateway"));
    const run = await launch((port) => ["exec", "--", "model-gateway", "start", "--config", config(), "--port", String(port), "--host", "127.0.0.1", "--no-watch"], project);
    // npm hands it to the shell, which dies of it; the gateway sees its parent gone. (A SIGINT would stay with the
    // shell, which waits for its child: the README says to send SIGTERM; Ctrl-C in a terminal signals them all.)
    run.npm.kill("SIGTERM");
    await run.exit;
    await until("the gateway to exit", () => !alive(run.gateway));
    expect(await portOpen(run.port)).toBe(false);
    expect(run.out()).toContain("the process that started the gateway (npm) has exited; shutting down");
    expect(run.out()).toContain('"shutdown complete"');
  }, 60_000);
});

describe("a second signal while records are held in memory only", () => {
  // Redis down and spool_dir unusable (require_persistence: false): answered requests' records are in memory only.
  // The first signal's close writes them out and gives the store a last chance (5 s); a second Ctrl-C meanwhile
  // used to exit 130 before anything was written, and both records were gone.
  it("SIGTERM then SIGINT during the last chance: exits non-zero, the records are in a file beside the config, and it replays into the ledger", async () => {
    const redis = await startRedis({ aof: false });
    const fake = await startFakeOpenAI();
    const dir = mkdtempSync(join(tmpdir(), "mg-held-"));
    const store = { kind: "redis", url: redis.url, prefix: "held:", require_persistence: false, timeout_ms: 200, probe_interval_ms: 200 };
    const configFile = join(dir, "gateway.yaml");
    writeFileSync(configFile, YAML.stringify(policyConfig(fake.baseUrl, { store: { ...store, spool_dir: join(dir, "sp") } })));
    let gw: Awaited<ReturnType<typeof startChildGateway>> | undefined;
    try {
      gw = await startChildGateway(configFile);
      gateways.push(gw.proc.pid!);
      rmSync(join(dir, "sp"), { recursive: true, force: true });
      writeFileSync(join(dir, "sp"), ""); // the spool_dir replaced by a regular file: no spool write can succeed
      await redis.kill();
      const ids = ["req_held_1", "req_held_2"];
      for (const id of ids) {
        const r = await fetch(`${gw.baseURL}/chat/completions`, { method: "POST", headers: { "content-type": "application/json", "x-request-id": id, ...auth() }, body: JSON.stringify(chat()) });
        expect(r.status).toBe(200); // each client got its answer
      }
      const exited = new Promise<number | null>((r) => gw!.proc.once("exit", (code) => r(code)));
      gw.proc.kill("SIGTERM");
      await until("the last chance to begin", () => /trying the store and the spool once more/.test(gw!.output()));
      gw.proc.kill("SIGINT");
      expect(await exited).not.toBe(0);

      const files = readdirSync(dir).filter((f) => /^ledger\..*unsaved.*\.jsonl$/.test(f));
      expect(files).toHaveLength(1);
      const lines = readFileSync(join(dir, files[0]!), "utf8").trim().split("\n").map((l) => JSON.parse(l));
      expect(lines.map((l) => l.v.entry.requestId).sort()).toEqual(ids);

      // Moved into a working spool_dir of the next start, they reach the ledger.
      await redis.restart({ aof: false });
      const spool = join(dir, "spool");
      mkdirSync(spool);
      renameSync(join(dir, files[0]!), join(spool, files[0]!));
      writeFileSync(configFile, YAML.stringify(policyConfig(fake.baseUrl, { store: { ...store, spool_dir: spool } })));
      const next = await startChildGateway(configFile);
      gateways.push(next.proc.pid!);
      const rs = await RedisStore.connect(redis.url, "held:");
      try {
        await until("the replay", async () => (await rs.ledger({})).length === 2);
        expect((await rs.ledger({})).map((e) => e.requestId).sort()).toEqual(ids);
      } finally {
        await rs.close();
        await next.stop();
      }
    } finally {
      await gw?.stop();
      await fake.close();
      await redis.stop();
    }
  }, 60_000);
});
