// Recordings of real coding agents' requests as they reached the gateway (written by `npm run test:agents`, replayed
// by test/agents-replay.e2e.test.ts): test/fixtures/agents/<agent>/<upstream>/turn-<n>.json, one file per request of
// the agent's main loop (the requests that carry the task and offer tools; side calls such as titles are left out).
// Secrets never reach a file: the key's header is dropped (only which header carried it is kept), `?key=` is cut
// from the path, and only the headers that say something about the protocol are kept. The run's temporary directory
// is replaced by a fixed one so recordings do not change from run to run for no reason.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { AgentId, AgentProtocol } from "../agents/agents.ts";
import type { Upstream } from "./agent-world.ts";
import type { ProxiedRequest } from "./recording-proxy.ts";
import { conversationText } from "../upstreams/scripted-agent.ts";

export const AGENT_FIXTURES = resolve(dirname(fileURLToPath(import.meta.url)), "../fixtures/agents");
/** What the run's temporary directory reads as in a recording. */
export const RECORDED_ROOT = "/tmp/mg-agent-run";

/** How the agent sent its key. */
export type AuthStyle = "x-api-key" | "authorization" | "x-goog-api-key";

export interface AgentTurn {
  agent: AgentId;
  /** The agent's version that sent it. */
  version: string;
  protocol: AgentProtocol;
  /** The upstream protocol of the model the agent was run against. */
  upstream: Upstream;
  /** The gateway model id it asked for. */
  model: string;
  turn: number;
  method: string;
  path: string;
  auth: AuthStyle;
  headers: Record<string, string>;
  body: any;
}

export interface AgentRecording {
  agent: AgentId;
  upstream: Upstream;
  turns: AgentTurn[];
}

/** Headers that tell the protocol, version or client: kept. Everything else (ids, keys, transport) is not. */
const KEPT_HEADERS = ["content-type", "accept", "anthropic-version", "anthropic-beta", "user-agent", "x-app", "originator", "openai-beta", "x-goog-api-client"];

function authStyle(h: ProxiedRequest["headers"]): AuthStyle {
  if (h["x-api-key"]) return "x-api-key";
  if (h["x-goog-api-key"]) return "x-goog-api-key";
  return "authorization";
}

/** A main-loop request: it carries the task and offers tools. */
export function isMainLoop(body: any): boolean {
  if (!body || typeof body !== "object") return false;
  const tools = Array.isArray(body.tools) ? body.tools : [];
  return tools.length > 0 && conversationText(body.messages ?? body.input ?? body.contents).includes("AGENT-TASK");
}

/** The main-loop requests of one run as fixtures; `root` (the run's temporary directory) becomes RECORDED_ROOT. */
export function toTurns(requests: ProxiedRequest[], meta: Omit<AgentTurn, "turn" | "method" | "path" | "auth" | "headers" | "body">, root: string): AgentTurn[] {
  return requests.filter((r) => r.method === "POST" && isMainLoop(r.body)).map((r, i) => {
    const headers = Object.fromEntries(KEPT_HEADERS.filter((k) => typeof r.headers[k] === "string").map((k) => [k, r.headers[k] as string]));
    const path = r.path.replace(/([?&])key=[^&]*&?/, "$1").replace(/[?&]$/, "");
    const body = JSON.parse(JSON.stringify(r.body).split(root).join(RECORDED_ROOT));
    return { ...meta, turn: i + 1, method: r.method, path, auth: authStyle(r.headers), headers, body };
  });
}

/** Writes one run's turns under `root` (AGENT_FIXTURES: the recordings `npm test` replays). */
export function writeRecording(turns: AgentTurn[], root = AGENT_FIXTURES): void {
  if (!turns.length) return;
  const dir = join(root, turns[0]!.agent, turns[0]!.upstream);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const t of turns) writeFileSync(join(dir, `turn-${t.turn}.json`), `${JSON.stringify(t, null, 1)}\n`);
}

export function loadRecordings(): AgentRecording[] {
  if (!existsSync(AGENT_FIXTURES)) return [];
  const out: AgentRecording[] = [];
  for (const agent of readdirSync(AGENT_FIXTURES).sort()) {
    for (const upstream of readdirSync(join(AGENT_FIXTURES, agent)).sort()) {
      const dir = join(AGENT_FIXTURES, agent, upstream);
      const files = readdirSync(dir).filter((f) => /^turn-\d+\.json$/.test(f)).sort((a, b) => parseInt(a.slice(5)) - parseInt(b.slice(5)));
      out.push({ agent: agent as AgentId, upstream: upstream as Upstream, turns: files.map((f) => JSON.parse(readFileSync(join(dir, f), "utf8"))) });
    }
  }
  return out;
}
