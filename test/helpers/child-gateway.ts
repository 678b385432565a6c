// A gateway in its own process (`node bin/model-gateway.mjs start`), so tests can kill -9 it and run replicas.
import { spawn, type ChildProcess } from "node:child_process";
import { freePort, portTaken } from "./ports.ts";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

export interface ChildGateway {
  url: string;
  baseURL: string;
  /** The metrics listener's /metrics URL (any free port, from the start banner), unless the config turns it off. */
  metricsUrl?: string;
  proc: ChildProcess;
  /** Everything it printed so far (stdout and stderr). */
  output(): string;
  /** SIGKILL: no shutdown hooks, no flushing. */
  kill9(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * `where.args`: more `start` options (`--workers 2`); `where.bin`: another install's bin (a deployment's
 * node_modules/model-gateway/bin/model-gateway.mjs), run from `where.cwd`.
 */
export async function startChildGateway(
  configFile: string, env: Record<string, string> = {}, nodeArgs: string[] = [], where: { args?: string[]; bin?: string; cwd?: string } = {},
): Promise<ChildGateway> {
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    const proc = spawn(process.execPath, [...nodeArgs, where.bin ?? "bin/model-gateway.mjs", "start", "--config", configFile, "--port", String(port), "--host", "127.0.0.1", "--metrics-port", "0", "--no-watch", ...(where.args ?? [])], {
      cwd: where.cwd ?? ROOT,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    const listening = await new Promise<boolean>((resolve) => {
      let seen = false;
      const onData = (d: Buffer) => {
        out += d;
        // Once: scanning the whole (growing) output on every chunk of a long run costs the test process seconds.
        // The banner's second line names the metrics URL.
        if (!seen && /listening on[^]*openapi: /.test(out)) resolve((seen = true));
      };
      proc.stdout!.on("data", onData);
      proc.stderr!.on("data", (d) => (out += d));
      proc.once("close", () => resolve(false)); // after "exit", once its output (why it did not start) is all read
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
      const metricsUrl = /metrics: (http:\/\/\S+)/.exec(out)?.[1];
      return { url, baseURL: `${url}/api/v1`, metricsUrl, proc, output: () => out, kill9: () => kill("SIGKILL"), stop: () => kill("SIGTERM") };
    }
    if (attempt >= 2 || !portTaken(out)) throw new Error(`gateway did not start:\n${out}`);
  }
}
