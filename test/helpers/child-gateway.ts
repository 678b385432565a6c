// A gateway in its own process (`node bin/model-gateway.mjs start`), so tests can kill -9 it and run replicas.
import { spawn, type ChildProcess } from "node:child_process";
import { freePort } from "./ports.ts";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

export interface ChildGateway {
  url: string;
  baseURL: string;
  proc: ChildProcess;
  /** SIGKILL: no shutdown hooks, no flushing. */
  kill9(): Promise<void>;
  stop(): Promise<void>;
}

/** `bin`: another install's bin (a deployment's node_modules/model-gateway/bin/model-gateway.mjs), run from `cwd`. */
export async function startChildGateway(
  configFile: string, env: Record<string, string> = {}, nodeArgs: string[] = [], where: { bin?: string; cwd?: string } = {},
): Promise<ChildGateway> {
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    const proc = spawn(process.execPath, [...nodeArgs, where.bin ?? "bin/model-gateway.mjs", "start", "--config", configFile, "--port", String(port), "--host", "127.0.0.1", "--no-watch"], {
      cwd: where.cwd ?? ROOT,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    const listening = await new Promise<boolean>((resolve) => {
      const onData = (d: Buffer) => {
        out += d;
        if (out.includes("listening on")) resolve(true);
      };
      proc.stdout!.on("data", onData);
      proc.stderr!.on("data", (d) => (out += d));
      proc.once("exit", () => resolve(false));
    });
    const exited = () => proc.exitCode !== null || proc.signalCode !== null;
    const kill = async (signal: NodeJS.Signals) => {
      if (exited()) return;
      const done = new Promise((r) => proc.once("exit", r));
      proc.kill(signal);
      await done;
    };
    if (listening) {
      const url = `http://127.0.0.1:${port}`;
      return { url, baseURL: `${url}/api/v1`, proc, kill9: () => kill("SIGKILL"), stop: () => kill("SIGTERM") };
    }
    if (attempt >= 2 || !/EADDRINUSE/.test(out)) throw new Error(`gateway did not start:\n${out}`);
  }
}
