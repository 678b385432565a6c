// The model-gateway CLI as a child process, without blocking this one (a gateway under test may run in it).
import { spawn } from "node:child_process";
import { resolve } from "node:path";

export const CLI_BIN = resolve("bin/model-gateway.mjs");

export interface CliRun { status: number | null; stdout: string; stderr: string }

/** Runs `model-gateway ...args` (logging silenced), killed after 30 s. */
export function runCli(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  return new Promise((res, rej) => {
    const child = spawn(process.execPath, [CLI_BIN, ...args], { env: { ...process.env, LOG_LEVEL: "silent", ...env } });
    let stdout = "", stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
    child.once("error", rej);
    child.once("exit", (status) => {
      clearTimeout(timer);
      res({ status, stdout, stderr });
    });
  });
}
