// A real redis-server on a free loopback port, in a temp dir, for tests; stop() kills it (by its own pid).
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { freePort } from "./ports.ts";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";

export interface TestRedis {
  url: string;
  port: number;
  stop(): Promise<void>;
}

export async function startRedis(): Promise<TestRedis> {
  const bin = process.env.REDIS_SERVER ?? "redis-server";
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    const dir = mkdtempSync(join(tmpdir(), "mg-redis-"));
    const child: ChildProcess = spawn(bin, ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let log = "";
    child.stdout!.on("data", (d) => (log += d));
    child.stderr!.on("data", (d) => (log += d));
    const spawnError = new Promise<Error>((resolve) => child.once("error", resolve));
    const url = `redis://127.0.0.1:${port}`;
    const ready = await Promise.race([waitReady(url), spawnError]);
    if (ready === true) {
      return {
        url,
        port,
        async stop() {
          if (child.exitCode === null && child.signalCode === null) {
            const exited = new Promise((r) => child.once("exit", r));
            child.kill("SIGKILL");
            await exited;
          }
          rmSync(dir, { recursive: true, force: true });
        },
      };
    }
    child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
    if (ready instanceof Error) throw new Error(`cannot start ${bin} (install redis-server): ${ready.message}`);
    if (attempt >= 2) throw new Error(`redis-server did not start on port ${port}:\n${log}`);
  }
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
