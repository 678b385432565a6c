// One agent run for the one-task suites (guardrail-block, answer-too-large): a fresh home and work directory, the
// agent's config files written, a bare environment, the agent in its own process group, killed at the limit.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { AgentSpec } from "./agents.ts";

const BIN_DIR = join(dirname(fileURLToPath(import.meta.url)), "node_modules", ".bin");

export interface AgentExit { code: number | null; out: string; timedOut: boolean }

export interface OneRun {
  agent: AgentSpec;
  origin: string;
  key: string;
  model: string;
  /** The prompt, given the work directory (a task may first put a file there: `prepare`). */
  prompt: (work: string) => string;
  prepare?: (work: string) => void;
  limitMs: number;
}

/** Runs the agent once on the prompt and returns what it printed; its directories are removed afterwards. */
export async function runAgentOnce(r: OneRun): Promise<AgentExit> {
  const root = mkdtempSync(join(tmpdir(), `mg-agent-${r.agent.id}-`));
  const home = join(root, "home");
  const work = join(root, "work");
  mkdirSync(home);
  mkdirSync(work);
  try {
    r.prepare?.(work);
    const launch = r.agent.launch({ origin: r.origin, key: r.key, model: r.model, home, work, prompt: r.prompt(work) });
    for (const [f, text] of Object.entries(launch.files)) {
      mkdirSync(dirname(join(home, f)), { recursive: true });
      writeFileSync(join(home, f), text);
    }
    const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, LANG: "C.UTF-8", TERM: "dumb", NO_COLOR: "1", CI: "1", DO_NOT_TRACK: "1", NO_UPDATE_NOTIFIER: "1", ...launch.env };
    return await run(join(BIN_DIR, r.agent.bin), launch.args, env, work, r.limitMs);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

function run(bin: string, args: string[], env: Record<string, string>, cwd: string, limitMs: number): Promise<AgentExit> {
  return new Promise((done) => {
    const child = spawn(bin, args, { cwd, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let timedOut = false;
    child.stdout.on("data", (c) => (out += c));
    child.stderr.on("data", (c) => (out += c));
    const timer = setTimeout(() => {
      timedOut = true;
      try { process.kill(-child.pid!, "SIGKILL"); } catch { /* gone */ }
    }, limitMs);
    child.on("close", (code) => {
      clearTimeout(timer);
      try { process.kill(-child.pid!, "SIGKILL"); } catch { /* none left */ }
      done({ code, out, timedOut });
    });
  });
}
