// A real redis-server on a free loopback port, in a temp dir, for tests; stop() kills it (by its own pid).
// Persistent by default (appendonly yes, as the gateway requires unless store.require_persistence is false); the
// outage tests pause it (SIGSTOP), kill it (SIGKILL) and start it again on the same port, with or without its data.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { freePort } from "./ports.ts";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";

export interface TestRedis {
  url: string;
  port: number;
  /** Its data directory (the AOF lives there). */
  dir: string;
  /** SIGSTOP: the connection stays open, nothing is answered. */
  pause(): void;
  /** SIGCONT. */
  resume(): void;
  /** SIGKILL, keeping the data directory; restart() brings it back. */
  kill(): Promise<void>;
  /** Start again on the same port: with its AOF (aof: true) or as an empty server without persistence (aof: false). */
  restart(o?: { aof?: boolean; freshDir?: boolean }): Promise<void>;
  stop(): Promise<void>;
}

export interface RedisOptions {
  /** appendonly yes (default) or no. */
  aof?: boolean;
}

export async function startRedis(o: RedisOptions = {}): Promise<TestRedis> {
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    let dir = mkdtempSync(join(tmpdir(), "mg-redis-"));
    let child: ChildProcess | undefined;
    try {
      child = await spawnRedis(port, dir, o.aof ?? true);
    } catch (err) {
      rmSync(dir, { recursive: true, force: true });
      if ((err as Error).message.startsWith("cannot start") || attempt >= 2) throw err;
      continue;
    }
    const dirs = [dir];
    const kill = async () => {
      const c = child!;
      if (c.exitCode === null && c.signalCode === null) {
        const exited = new Promise((r) => c.once("exit", r));
        c.kill("SIGCONT"); // a paused server must run to die cleanly of SIGKILL (it would anyway; this keeps it quick)
        c.kill("SIGKILL");
        await exited;
      }
    };
    return {
      url: `redis://127.0.0.1:${port}`,
      port,
      get dir() { return dir; },
      pause: () => void child!.kill("SIGSTOP"),
      resume: () => void child!.kill("SIGCONT"),
      kill,
      async restart(r = {}) {
        await kill();
        if (r.freshDir) dirs.push((dir = mkdtempSync(join(tmpdir(), "mg-redis-"))));
        child = await spawnRedis(port, dir, r.aof ?? true);
      },
      async stop() {
        await kill();
        for (const d of dirs) rmSync(d, { recursive: true, force: true });
      },
    };
  }
}

async function spawnRedis(port: number, dir: string, aof: boolean): Promise<ChildProcess> {
  const bin = process.env.REDIS_SERVER ?? "redis-server";
  const args = ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--dir", dir, "--appendonly", aof ? "yes" : "no", "--appendfsync", "everysec"];
  const child: ChildProcess = spawn(bin, args, { stdio: ["ignore", "pipe", "pipe"] });
  let log = "";
  child.stdout!.on("data", (d) => (log += d));
  child.stderr!.on("data", (d) => (log += d));
  const spawnError = new Promise<Error>((resolve) => child.once("error", resolve));
  const ready = await Promise.race([waitReady(`redis://127.0.0.1:${port}`), spawnError]);
  if (ready === true) return child;
  child.kill("SIGKILL");
  if (ready instanceof Error) throw new Error(`cannot start ${bin} (install redis-server): ${ready.message}`);
  throw new Error(`redis-server did not start on port ${port}:\n${log}`);
}

async function waitReady(url: string): Promise<boolean> {
  for (let i = 0; i < 100; i++) {
    const r = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    r.on("error", () => {});
    try {
      await r.connect();
      await r.ping();
      r.disconnect();
      return true;
    } catch {
      r.disconnect();
      await new Promise((res) => setTimeout(res, 50));
    }
  }
  return false;
}
