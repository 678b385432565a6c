// `npm run test:agents`: the real coding agents (test/agents/package.json, pinned to versions that run on Node 20)
// each complete a multi-step tool task through the gateway as it ships, on a model of every upstream protocol they
// can reach: the scripted fake model (test/upstreams/scripted-agent.ts) has the agent write a file with its own
// write tool, reads the tool's result and answers. Each cell asserts the file, the exit code and the final answer,
// and records the agent's main-loop requests as they reached the gateway: into .vitest/agent-recordings/, or with
// AGENTS_RECORD=1 (`npm run test:agents:record`) into test/fixtures/agents/, which test/agents-replay.e2e.test.ts
// replays in `npm test` (ids and session details differ from run to run, so a plain run leaves the tree alone). The
// table of results is printed at the end and written to .vitest/agents.md.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AGENTS, type AgentLaunch, type AgentSpec } from "./agents.ts";
import { MODEL, startAgentWorld, type AgentWorld, type Upstream } from "../helpers/agent-world.ts";
import { startRecordingProxy, type RecordingProxy } from "../helpers/recording-proxy.ts";
import { SHIPPED_KEY } from "../helpers/shipped-config.ts";
import { AGENT_FIXTURES, toTurns, writeRecording } from "../helpers/agent-fixtures.ts";
import { FINAL_ANSWER, taskPrompt } from "../upstreams/scripted-agent.ts";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, "../..");
/** One agent run's limit: a hung agent fails its cell instead of stalling the run. */
const RUN_LIMIT_MS = 180_000;
const CONTENT = "gateway-agent-ok";
const CONTINUED = "gateway-agent-continued";
const RECORDINGS = process.env.AGENTS_RECORD === "1" ? AGENT_FIXTURES : join(ROOT, ".vitest/agent-recordings");

let world: AgentWorld;
let proxy: RecordingProxy;
/** One cell each; `resumedFrom`: a session begun on that upstream and continued on `upstream`. */
const results: { agent: string; upstream: Upstream; ok: boolean; why: string; resumedFrom?: Upstream }[] = [];

beforeAll(async () => {
  world = await startAgentWorld();
  proxy = await startRecordingProxy(world.gw.url);
});

afterAll(async () => {
  await proxy?.close();
  await world?.close();
  const cols = ["anthropic", "openai-chat", "gemini", "openai-responses"] as Upstream[];
  const row = (a: AgentSpec, continued: boolean) =>
    `| ${a.id}${continued ? " (session continued on this model)" : ""} | ${versionOf(a)} | ${cols.map((u) => {
      const r = results.find((x) => x.agent === a.id && x.upstream === u && (x.resumedFrom !== undefined) === continued);
      return !r ? (a.upstreams.includes(u) ? "not run" : "n/a") : r.ok ? (continued ? `pass (from ${r.resumedFrom})` : "pass") : `FAIL: ${r.why.replace(/\|/g, "\\|").replace(/\s+/g, " ").slice(0, 300)}`;
    }).join(" | ")} |`;
  const table = [
    `| agent | version | ${cols.join(" | ")} |`,
    "|---|---|---|---|---|---|",
    ...AGENTS.flatMap((a) => (a.resume ? [row(a, false), row(a, true)] : [row(a, false)])),
  ].join("\n");
  mkdirSync(join(ROOT, ".vitest"), { recursive: true });
  writeFileSync(join(ROOT, ".vitest/agents.md"), `${table}\n`);
  console.log(`\n${table}\n`);
});

function versionOf(a: AgentSpec): string {
  const pkg = join(HERE, "node_modules", a.pkg, "package.json");
  return existsSync(pkg) ? JSON.parse(readFileSync(pkg, "utf8")).version : "not installed";
}

interface Exit { code: number | null; signal: string | null; stdout: string; stderr: string; timedOut: boolean }

/** Runs the agent in its own process group with a bare environment (no real keys leak in), killed at the limit. */
function runAgent(a: AgentSpec, env: Record<string, string>, args: string[], cwd: string): Promise<Exit> {
  const bin = join(HERE, "node_modules", ".bin", a.bin);
  return new Promise((done) => {
    const child = spawn(bin, args, { cwd, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    let timedOut = false;
    child.stdout.on("data", (c) => (stdout += c));
    child.stderr.on("data", (c) => (stderr += c));
    const timer = setTimeout(() => {
      timedOut = true;
      try { process.kill(-child.pid!, "SIGKILL"); } catch { /* already gone */ }
    }, RUN_LIMIT_MS);
    child.on("error", (err) => {
      clearTimeout(timer);
      done({ code: null, signal: null, stdout, stderr: `${stderr}\n${err}`, timedOut });
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      // Whatever the agent left running in its group (an MCP server, a shell) goes with it.
      try { process.kill(-child.pid!, "SIGKILL"); } catch { /* none left */ }
      done({ code, signal, stdout, stderr, timedOut });
    });
  });
}

/** Why a cell failed, in a line: the gateway's refusal if there was one, else what the agent said. */
function whyFailed(e: unknown, exit: Exit | undefined, from: number): string {
  const refused = proxy.requests.slice(from).find((r) => (r.status ?? 0) >= 400 && r.method === "POST");
  if (refused) return `gateway answered ${refused.status} to ${refused.path.split("?")[0]}: ${refused.error ?? ""}`;
  if (exit?.timedOut) return `no exit after ${RUN_LIMIT_MS / 1000} s`;
  const said = `${exit?.stderr ?? ""}\n${exit?.stdout ?? ""}`.split("\n").map((l) => l.trim()).filter(Boolean).slice(-3).join(" / ");
  return `${e instanceof Error ? e.message.split("\n")[0] : String(e)}${said ? ` (agent: ${said})` : ""}`;
}

/** Writes the agent's config files into its home; returns the bare environment it runs with. */
function prepare(launch: AgentLaunch, home: string): Record<string, string> {
  for (const [file, text] of Object.entries(launch.files)) {
    mkdirSync(dirname(join(home, file)), { recursive: true });
    writeFileSync(join(home, file), text);
  }
  return { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, LANG: "C.UTF-8", TERM: "dumb", NO_COLOR: "1", CI: "1", DO_NOT_TRACK: "1", NO_UPDATE_NOTIFIER: "1", ...launch.env };
}

/** A fresh home and working directory for one cell. */
function cellDirs(): { root: string; home: string; work: string } {
  const root = mkdtempSync(join(tmpdir(), "mg-agent-"));
  const home = join(root, "home");
  const work = join(root, "work");
  mkdirSync(home);
  mkdirSync(work);
  return { root, home, work };
}

/** The task's file holds its content, the agent answered FINAL_ANSWER and exited 0. */
function expectTaskDone(agent: AgentSpec, exit: Exit, home: string, target: string, content: string): void {
  expect(exit.timedOut, "the agent hung").toBe(false);
  expect(existsSync(target), "the agent wrote no file").toBe(true);
  expect(readFileSync(target, "utf8").trim()).toBe(content);
  expect(agent.answer({ stdout: exit.stdout, home })).toBe(FINAL_ANSWER);
  expect(exit.code, "exit code").toBe(0);
}

for (const agent of AGENTS) {
  describe(`${agent.id} through the gateway`, () => {
    for (const upstream of agent.upstreams) {
      it(`writes the file, reads the result and answers on ${MODEL[upstream]} (${upstream})`, { timeout: RUN_LIMIT_MS + 30_000 }, async () => {
        const { root, home, work } = cellDirs();
        const target = join(work, "hello.txt");
        const launch = agent.launch({ origin: proxy.origin, key: SHIPPED_KEY, model: MODEL[upstream], home, work, prompt: taskPrompt(target, CONTENT) });
        const env = prepare(launch, home);
        const from = proxy.requests.length;
        let exit: Exit | undefined;
        try {
          exit = await runAgent(agent, env, launch.args, work);
          writeRecording(toTurns(proxy.requests.slice(from), { agent: agent.id, version: versionOf(agent), protocol: agent.protocol, upstream, model: MODEL[upstream] }, root), RECORDINGS);
          expectTaskDone(agent, exit, home, target, CONTENT);
          results.push({ agent: agent.id, upstream, ok: true, why: "" });
        } catch (e) {
          results.push({ agent: agent.id, upstream, ok: false, why: whyFailed(e, exit, from) });
          throw e;
        } finally {
          rmSync(root, { recursive: true, force: true });
        }
      });
    }

    // A session begun on one model and continued on the next, as users switch models mid-task: the history the agent
    // sends back (thinking, reasoning items, signed tool ids of another protocol) must be accepted by the new upstream.
    const resume = agent.resume;
    if (!resume) return;
    agent.upstreams.forEach((first, i) => {
      const next = agent.upstreams[(i + 1) % agent.upstreams.length]!;
      it(`continues a session begun on ${first} on ${MODEL[next]} (${next})`, { timeout: 2 * RUN_LIMIT_MS + 30_000 }, async () => {
        const { root, home, work } = cellDirs();
        const firstTarget = join(work, "hello.txt");
        const nextTarget = join(work, "continued.txt");
        const from = proxy.requests.length;
        let exit: Exit | undefined;
        try {
          const begin = agent.launch({ origin: proxy.origin, key: SHIPPED_KEY, model: MODEL[first], home, work, prompt: taskPrompt(firstTarget, CONTENT) });
          exit = await runAgent(agent, prepare(begin, home), begin.args, work);
          expectTaskDone(agent, exit, home, firstTarget, CONTENT);
          const run = { origin: proxy.origin, key: SHIPPED_KEY, model: MODEL[next], home, work, prompt: taskPrompt(nextTarget, CONTINUED) };
          const seen = world.upstreamRequests(next).length;
          exit = await runAgent(agent, prepare(agent.launch(run), home), resume(run), work);
          expectTaskDone(agent, exit, home, nextTarget, CONTINUED);
          // A continuation, not a fresh session: the new model was sent the first task too.
          const sent = world.upstreamRequests(next).slice(seen).map((r) => JSON.stringify(r.body));
          expect(sent.some((b) => b.includes(`content=${CONTENT}`) && b.includes(`content=${CONTINUED}`)), "the first task's history reached the next model").toBe(true);
          results.push({ agent: agent.id, upstream: next, ok: true, why: "", resumedFrom: first });
        } catch (e) {
          results.push({ agent: agent.id, upstream: next, ok: false, why: whyFailed(e, exit, from), resumedFrom: first });
          throw e;
        } finally {
          rmSync(root, { recursive: true, force: true });
        }
      });
    });
  });
}
