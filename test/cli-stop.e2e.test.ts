// Stopping the gateway through npm: `npm start` and `npx model-gateway` run it as npm → sh -c → node, and npm
// passes SIGTERM / SIGINT only to its direct child. Whatever the wrapper, signalling npm must stop the gateway
// (its graceful shutdown) and free the port — never leave an orphan holding it.
import { afterEach, describe, expect, it } from "vitest";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { freePort } from "./helpers/ports.ts";

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

/** Run npm with these args, wait for the gateway's banner; its pid comes from the banner. */
async function launch(args: string[], cwd: string, port: number): Promise<{ npm: ChildProcess; gateway: number; out: () => string; exit: Promise<unknown> }> {
  const npm = spawn("npm", args, { cwd, env: npmEnv(), stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  npm.stdout!.on("data", (d) => (out += d));
  npm.stderr!.on("data", (d) => (out += d));
  const exit = new Promise((r) => npm.once("exit", r));
  const gateway = await Promise.race([
    new Promise<number>((r) => npm.stdout!.on("data", () => {
      const m = out.match(/listening on http:\/\/127\.0\.0\.1:(\d+) \(config .*; pid (\d+)\)/);
      if (m) r(Number(m[2]));
    })),
    exit.then(() => {
      throw new Error(`npm exited before the gateway listened:\n${out}`);
    }),
  ]);
  gateways.push(gateway);
  expect(await portOpen(port)).toBe(true);
  return { npm, gateway, out: () => out, exit };
}

function config(): string {
  const dir = mkdtempSync(join(tmpdir(), "mg-cli-stop-"));
  writeFileSync(join(dir, "gateway.yaml"), "store: { kind: memory }\n");
  return join(dir, "gateway.yaml");
}

describe("stopping the gateway through npm", () => {
  it.each(["SIGTERM", "SIGINT"] as const)("npm start: %s to npm reaches the gateway, which shuts down gracefully and frees its port", async (signal) => {
    const port = await freePort();
    const run = await launch(["start", "--", "--config", config(), "--port", String(port), "--host", "127.0.0.1", "--no-watch"], ROOT, port);
    // No shell left between npm and the gateway.
    expect(Number(readFileSync(`/proc/${run.gateway}/stat`, "utf8").split(") ")[1]!.split(" ")[1])).toBe(run.npm.pid);
    run.npm.kill(signal);
    await run.exit;
    await until("the gateway to exit", () => !alive(run.gateway));
    expect(await portOpen(port)).toBe(false);
    expect(run.out()).toContain('"shutdown complete"');
  }, 60_000);

  it("npx model-gateway: SIGTERM to npx stops the gateway behind its shell too", async () => {
    // A project that has the gateway installed: npx finds node_modules/.bin/model-gateway, no registry involved.
    const project = mkdtempSync(join(tmpdir(), "mg-npx-"));
    mkdirSync(join(project, "node_modules", ".bin"), { recursive: true });
    symlinkSync(BIN, join(project, "node_modules", ".bin", "model-gateway"));
    const port = await freePort();
    const run = await launch(["exec", "--", "model-gateway", "start", "--config", config(), "--port", String(port), "--host", "127.0.0.1", "--no-watch"], project, port);
    // npm hands it to the shell, which dies of it; the gateway sees its parent gone. (A SIGINT would stay with the
    // shell, which waits for its child: the README says to send SIGTERM; Ctrl-C in a terminal signals them all.)
    run.npm.kill("SIGTERM");
    await run.exit;
    await until("the gateway to exit", () => !alive(run.gateway));
    expect(await portOpen(port)).toBe(false);
    expect(run.out()).toContain("the process that started the gateway (npm) has exited; shutting down");
    expect(run.out()).toContain('"shutdown complete"');
  }, 60_000);
});
