// `npm run test:agents`: each coding agent on the README's sandbox key (the simulator plays the model), as a newcomer
// runs it, must finish a task that makes it call a tool: "Read note.txt and tell me what it says". Qwen Code used to
// go on for ever (the simulator called its agent tool, and each background agent's notification started more calls:
// 387 requests in 120 s), and opencode got a 400 for its bash tool's timeout bounds. The README's own Qwen Code
// line is run as printed, without the settings.json docs/agents.md gives (it failed: "No auth type is selected").
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AGENTS, type AgentSpec } from "./agents.ts";
import { runAgentOnce } from "./run-once.ts";
import { MODEL } from "../helpers/agent-world.ts";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { providerEnv, shippedConfig } from "../helpers/shipped-config.ts";

const SANDBOX_KEY = "mg_test_quickstart_sandbox_key_0001";
const RUN_LIMIT_MS = 120_000;
const NOTE = "pineapples are berries";
const prepare = (work: string) => writeFileSync(join(work, "note.txt"), `The note says: ${NOTE}.\n`);
const prompt = () => "Read note.txt and tell me what it says";
/** More model calls than a run with one round of tool calls makes (the agents' helper calls included). */
const FEW = 12;

let gw: TestGateway;
beforeAll(async () => {
  // No provider reachable: a sandbox key reaches only the simulator.
  const config = shippedConfig({ openai: "http://127.0.0.1:9", anthropic: "http://127.0.0.1:9" });
  gw = await startTestGateway(config, { env: providerEnv(config) });
});
afterAll(async () => {
  await gw?.close();
});

async function runOnSandbox(agent: AgentSpec, model: string) {
  const before = (await gw.gateway.store.ledger({})).length;
  const exit = await runAgentOnce({ agent, origin: gw.url, key: SANDBOX_KEY, model, prompt, prepare, limitMs: RUN_LIMIT_MS });
  return { ...exit, requests: (await gw.gateway.store.ledger({})).length - before };
}

describe("the coding agents on the sandbox key", () => {
  it.each(AGENTS.map((a) => [a.id, a] as const))("%s finishes a task that calls its read tool", { timeout: RUN_LIMIT_MS + 30_000 }, async (_id, agent) => {
    const exit = await runOnSandbox(agent, MODEL.anthropic);
    expect(exit.timedOut, `still running after ${RUN_LIMIT_MS / 1000} s: ${exit.out.slice(-500)}`).toBe(false);
    expect(exit.code, exit.out.slice(-1000)).toBe(0);
    expect(exit.requests, "model calls").toBeLessThanOrEqual(FEW);
    // The simulator's answer: the read tool's result (the note, or the agent's reason it could not read it), or,
    // for Codex (whose only way to read is a shell command, which the simulator does not write), its text reply.
    expect(exit.out).toMatch(agent.id === "codex" ? /Simulated reply from/ : /Based on the tool result/);
  });

  it("the README's Qwen Code line runs as printed, with no settings.json", { timeout: RUN_LIMIT_MS + 30_000 }, async () => {
    const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
    const line = readme.split("\n").find((l) => /^(\w+=\S+ )+qwen /.test(l));
    expect(line, "the README's qwen line").toBeDefined();
    const words = line!.replace(/\s+#.*$/, "").split(/\s+/);
    const at = words.indexOf("qwen");
    const origin = new URL(gw.url).origin;
    const env = Object.fromEntries(words.slice(0, at).map((w) => {
      const [k, v] = w.split(/=(.*)/) as [string, string];
      return [k, v.replace("http://127.0.0.1:8787", origin).replace("$MG_KEY", SANDBOX_KEY)];
    }));
    const qwen = AGENTS.find((a) => a.id === "qwen-code")!;
    const asPrinted: AgentSpec = { ...qwen, launch: (r) => ({ args: [...words.slice(at + 1), "-p", r.prompt], env, files: {} }) };
    const exit = await runOnSandbox(asPrinted, "unused");
    expect(exit.code, exit.out.slice(-1000)).toBe(0);
    expect(exit.out).toMatch(/Based on the tool result/);
  });
});
