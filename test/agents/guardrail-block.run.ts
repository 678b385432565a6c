// `npm run test:agents`: a real agent whose answer the guardrails block mid-stream: Responses agents (Codex CLI,
// opencode's Responses provider), Gemini CLI and Claude Code. The agent reads a file holding an API key with its own
// shell or read tool; the scripted model echoes the key; an output rule with action block stops the stream. The agent must show the
// rule's message and stop after that ONE call: when the stream ended with the `error` event alone, Codex reconnected
// five times (each call billed, "stream closed before response.completed") and opencode sent it again until killed;
// when a Gemini stream was cut after its error frame, Gemini CLI showed only "TypeError: terminated" (its @google/genai
// 1.30 reads no `error` frame, and the cut reached it before the frames it had not read yet); when a Messages stream
// ended with the `error` event, Claude Code sent the request again without streaming (billed twice) and showed only
// "API Error: 400 ...". On the shipped gateway.yaml with the rule added.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AGENTS } from "./agents.ts";
import { runAgentOnce } from "./run-once.ts";
import { MODEL } from "../helpers/agent-world.ts";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { providerEnv, shippedConfig, SHIPPED_KEY, SHIPPED_PROJECT } from "../helpers/shipped-config.ts";
import { startFakeOpenAIResponses, type FakeOpenAIWithResponses } from "../upstreams/openai-responses.ts";
import { startFakeAnthropic, type FakeAnthropic } from "../upstreams/anthropic.ts";
import { toolInput } from "../upstreams/schema-sample.ts";
import type { AgentScript, OfferedTool } from "../upstreams/scripted-agent.ts";

const RUN_LIMIT_MS = 120_000;
const SECRET = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdEFGH";
const TASK = /GUARD-TASK path=(\S+)/;
const READERS = ["read", "Read", "read_file", "exec_command", "shell_command", "shell", "bash", "Bash"];

/** Reads the task's file with the agent's own tool; once it has, echoes the key it holds. */
const script: AgentScript = ({ tools, text, answered }) => {
  if (text.includes(TOOL_TASK)) return cutToolCall(tools, answered);
  const path = TASK.exec(text)?.[1];
  if (!path) return undefined;
  // More than the rule's 64-character window before the key: that much of the answer reaches the agent first.
  if (answered && text.includes(SECRET)) return { text: `Here is what the file you asked me to read holds, as it is written there: the key is ${SECRET}, nothing else is in it.` };
  const tool = READERS.map((n) => tools.find((t) => t.name === n)).find(Boolean) as OfferedTool | undefined;
  if (!tool) return { text: "no tool to read with" };
  const props = tool.schema?.properties ?? {};
  const pathKey = ["filePath", "file_path", "path"].find((k) => k in props);
  if (pathKey) return { call: { name: tool.name, input: toolInput(tool.schema, { [pathKey]: path }) } };
  const key = "cmd" in props ? "cmd" : "command";
  const cmd = `cat '${path}'`;
  return { call: { name: tool.name, input: toolInput(tool.schema, { [key]: String(props[key]?.type).toLowerCase() === "array" ? ["bash", "-lc", cmd] : cmd }) } };
};

const TOOL_TASK = "GUARD-TOOL-TASK";
/** A shell call whose command carries the key past the window: the block comes mid-arguments, its tool_use block open. */
function cutToolCall(tools: OfferedTool[], answered: boolean) {
  const bash = tools.find((t) => t.name === "Bash");
  if (!bash || answered) return { text: answered ? "the command ran (it should not have)" : "no Bash tool" };
  return { call: { name: bash.name, input: toolInput(bash.schema, { command: `echo "configuring the service from the key in the environment file now" && echo ${SECRET} > key.txt` }) } };
}

let openai: FakeOpenAIWithResponses;
let anthropic: FakeAnthropic;
let gw: TestGateway;

beforeAll(async () => {
  [openai, anthropic] = await Promise.all([startFakeOpenAIResponses(), startFakeAnthropic()]);
  openai.script = script;
  anthropic.script = script;
  // Event by event, as over a network: the block comes mid-stream, after the answer's start went out.
  anthropic.eventDelayMs = 5;
  openai.pace = () => 5;
  const config = shippedConfig({ openai: openai.baseUrl, anthropic: anthropic.baseUrl });
  config.projects[SHIPPED_PROJECT].guardrails = { rules: [{ name: "no-secrets", detect: ["secret"], on: ["output"], action: "block" }] };
  gw = await startTestGateway(config, { env: providerEnv(config) });
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([openai?.close(), anthropic?.close()]);
});

// On a translated model: the fake OpenAI /responses shows its script only the conversation's messages, not the tool
// output the model echoes (test/e2e covers the native relay: test/responses-stream-blocked.e2e.test.ts).
// Claude Code on a translated model (OpenAI chat): there, after the `error` event, it sent the request again without
// streaming (on Anthropic's own model it did not).
const cells = [["codex", "anthropic"], ["opencode-responses", "anthropic"], ["gemini-cli", "anthropic"], ["claude-code", "anthropic"], ["claude-code", "openai-chat"]] as const;

describe("an agent whose answer the guardrails block mid-stream", () => {
  it.each(cells)("%s on %s shows the rule's message and stops after the one blocked call", { timeout: RUN_LIMIT_MS + 30_000 }, async (id, upstream) => {
    const agent = AGENTS.find((a) => a.id === id)!;
    const requests = upstream === "anthropic" ? anthropic.requests : openai.requests;
    const before = requests.length;
    const exit = await runAgentOnce({
      agent, origin: gw.url, key: SHIPPED_KEY, model: upstream === "openai-chat" ? "openai/gpt-4.1" : MODEL[upstream], limitMs: RUN_LIMIT_MS,
      prepare: (work) => writeFileSync(join(work, "config.txt"), `OPENAI_KEY=${SECRET}\n`),
      prompt: (work) => `GUARD-TASK path=${join(work, "config.txt")}\nPrint the API key in ${join(work, "config.txt")}.`,
    });
    expect(exit.timedOut, "the agent kept asking again").toBe(false);
    expect(exit.out).toMatch(/blocked by guardrail \W*no-secrets/);
    // The calls that carried the file's key (the answering turn): one, not one per retry.
    const answering = requests.slice(before).filter((r) => JSON.stringify(r.body).includes(SECRET));
    expect(answering.length).toBe(1);
  });
});

// The refusal once closed the open tool_use block (content_block_stop): Claude Code starts a tool there, so it ran the
// command cut short, sent its result back, was blocked again, and so on (478 billed calls in 100 s).
describe("Claude Code whose tool call the guardrails block mid-arguments", () => {
  it.each(["anthropic", "openai-chat"] as const)("on %s runs no tool and stops after the one blocked call", { timeout: RUN_LIMIT_MS + 30_000 }, async (upstream) => {
    const agent = AGENTS.find((a) => a.id === "claude-code")!;
    const requests = upstream === "anthropic" ? anthropic.requests : openai.requests;
    const before = requests.length;
    const exit = await runAgentOnce({
      agent, origin: gw.url, key: SHIPPED_KEY, model: upstream === "openai-chat" ? "openai/gpt-4.1" : MODEL[upstream], limitMs: RUN_LIMIT_MS,
      prompt: () => `${TOOL_TASK} please run it`,
    });
    expect(exit.timedOut, "the agent kept asking again").toBe(false);
    expect(exit.out).toMatch(/blocked by guardrail \W*no-secrets/);
    const task = requests.slice(before).filter((r) => JSON.stringify(r.body).includes(TOOL_TASK));
    expect(task.length).toBe(1);
  });
});
