// The coding agents `npm run test:agents` drives through the gateway, each pointed at it the way docs/agents.md tells
// a user to (its own base-URL variable or provider config), with telemetry, update checks and other calls home off
// (nothing but loopback is reachable here), thinking/reasoning on, and its file-writing tool allowed without a prompt.
import { existsSync, readFileSync } from "node:fs";
import type { Upstream } from "../helpers/agent-world.ts";

export type AgentId = "claude-code" | "codex" | "opencode" | "opencode-responses" | "qwen-code" | "gemini-cli";
/** The client protocol an agent speaks to the gateway. */
export type AgentProtocol = "messages" | "chat" | "responses" | "gemini";

export interface AgentRun {
  /** The recording proxy in front of the gateway (http://127.0.0.1:port): what the agent is pointed at. */
  origin: string;
  key: string;
  /** The gateway model id. */
  model: string;
  /** A fresh home directory (the agent's config goes there) and the working directory the task writes into. */
  home: string;
  work: string;
  prompt: string;
}

export interface AgentLaunch {
  args: string[];
  env: Record<string, string>;
  /** Files to write before starting, by path relative to the home directory. */
  files: Record<string, string>;
}

export interface AgentSpec {
  id: AgentId;
  /** npm package and its executable in test/agents/node_modules/.bin. */
  pkg: string;
  bin: string;
  protocol: AgentProtocol;
  /** The upstream protocols this agent is run against (the native Responses one only for Responses clients). */
  upstreams: readonly Upstream[];
  launch(run: AgentRun): AgentLaunch;
  /**
   * The arguments that continue the agent's last session in the same home and work directories, on `run.model`
   * with a new prompt (its env and files come from `launch`); absent for agents that cannot (or whose continuation
   * is broken upstream of the gateway: Gemini CLI 0.61 `--resume` sends every functionResponse twice).
   */
  resume?(run: AgentRun): string[];
  /** The agent's final answer, read from what it printed (or wrote into its home). */
  answer(out: { stdout: string; home: string }): string | undefined;
}

const THREE: readonly Upstream[] = ["anthropic", "openai-chat", "gemini"];
const ALL: readonly Upstream[] = ["anthropic", "openai-chat", "gemini", "openai-responses"];
const json = (v: unknown) => JSON.stringify(v, null, 2);

const readText = (path: string) => (existsSync(path) ? readFileSync(path, "utf8") : undefined);

/** The last JSON value a CLI printed (its --output-format json result), or undefined. */
function lastJson(stdout: string): any {
  const start = stdout.search(/[[{]/);
  if (start < 0) return undefined;
  try {
    return JSON.parse(stdout.slice(start).trim());
  } catch {
    return undefined;
  }
}

/** opencode with a provider entry for the gateway, on the given AI SDK provider package (chat or Responses). */
const opencodeResume = (r: AgentRun) => ["run", "--continue", "--format", "json", "-m", `gateway/${r.model}`, r.prompt];

function opencodeLaunch(r: AgentRun, npm: string): AgentLaunch {
  return {
    args: ["run", "--format", "json", "-m", `gateway/${r.model}`, r.prompt],
    env: {
      MG_KEY: r.key,
      OPENCODE_DISABLE_AUTOUPDATE: "1",
      OPENCODE_DISABLE_MODELS_FETCH: "1",
      OPENCODE_DISABLE_DEFAULT_PLUGINS: "1",
      OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
    },
    files: {
      ".config/opencode/opencode.json": json({
        $schema: "https://opencode.ai/config.json",
        autoupdate: false,
        share: "disabled",
        permission: { edit: "allow", bash: "allow", external_directory: "allow" },
        provider: {
          gateway: {
            npm,
            name: "Model Gateway",
            options: { baseURL: `${r.origin}/api/v1`, apiKey: "{env:MG_KEY}" },
            models: { [r.model]: { name: r.model, reasoning: true, tool_call: true, options: { reasoningEffort: "medium" } } },
          },
        },
        model: `gateway/${r.model}`,
        small_model: `gateway/${r.model}`,
      }),
    },
  };
}

/** `opencode run --format json`: one event per line; the answer is the text of the last text part. */
function opencodeAnswer(stdout: string): string | undefined {
  const texts = stdout.split("\n").flatMap((l) => {
    try {
      const e = JSON.parse(l);
      return e?.type === "text" && typeof e.part?.text === "string" ? [e.part.text] : [];
    } catch {
      return [];
    }
  });
  return texts.at(-1)?.trim();
}

export const AGENTS: readonly AgentSpec[] = [
  {
    id: "claude-code",
    pkg: "@anthropic-ai/claude-code",
    bin: "claude",
    protocol: "messages",
    upstreams: THREE,
    launch: (r) => ({
      args: ["-p", r.prompt, "--model", r.model, "--permission-mode", "acceptEdits", "--output-format", "json"],
      env: {
        ANTHROPIC_BASE_URL: `${r.origin}/api`,
        ANTHROPIC_API_KEY: r.key,
        // Its background calls (titles, summaries) go to the same gateway model instead of a bare Haiku id.
        ANTHROPIC_SMALL_FAST_MODEL: r.model,
        ANTHROPIC_DEFAULT_HAIKU_MODEL: r.model,
        MAX_THINKING_TOKENS: "4096",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        DISABLE_TELEMETRY: "1",
        DISABLE_ERROR_REPORTING: "1",
        DISABLE_AUTOUPDATER: "1",
      },
      files: {},
    }),
    resume: (r) => ["-c", "-p", r.prompt, "--model", r.model, "--permission-mode", "acceptEdits", "--output-format", "json"],
    answer: ({ stdout }) => lastJson(stdout)?.result,
  },
  {
    id: "codex",
    pkg: "@openai/codex",
    bin: "codex",
    protocol: "responses",
    upstreams: ALL,
    launch: (r) => ({
      args: ["exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "--output-last-message", `${r.home}/last-message.txt`, r.prompt],
      env: { CODEX_HOME: `${r.home}/.codex`, MG_KEY: r.key },
      files: {
        ".codex/config.toml": [
          `model = "${r.model}"`,
          `model_provider = "gateway"`,
          `model_reasoning_effort = "medium"`,
          `check_for_update_on_startup = false`,
          ``,
          `[model_providers.gateway]`,
          `name = "Model Gateway"`,
          `base_url = "${r.origin}/api/v1"`,
          `env_key = "MG_KEY"`,
          `wire_api = "responses"`,
          ``,
          `[analytics]`,
          `enabled = false`,
          ``,
        ].join("\n"),
      },
    }),
    resume: (r) => ["exec", "resume", "--last", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "-m", r.model, "--output-last-message", `${r.home}/last-message.txt`, r.prompt],
    // --output-last-message: the documented place for scripts (stdout has it too, after the run's log).
    answer: ({ home }) => readText(`${home}/last-message.txt`)?.trim(),
  },
  {
    id: "opencode",
    pkg: "opencode-ai",
    bin: "opencode",
    protocol: "chat",
    upstreams: THREE,
    launch: (r) => opencodeLaunch(r, "@ai-sdk/openai-compatible"),
    resume: opencodeResume,
    answer: ({ stdout }) => opencodeAnswer(stdout),
  },
  {
    // The same agent on its OpenAI provider package, which speaks the Responses API.
    id: "opencode-responses",
    pkg: "opencode-ai",
    bin: "opencode",
    protocol: "responses",
    upstreams: ALL,
    launch: (r) => opencodeLaunch(r, "@ai-sdk/openai"),
    resume: opencodeResume,
    answer: ({ stdout }) => opencodeAnswer(stdout),
  },
  {
    id: "qwen-code",
    pkg: "@qwen-code/qwen-code",
    bin: "qwen",
    protocol: "chat",
    upstreams: THREE,
    launch: (r) => ({
      args: ["-p", r.prompt, "-m", r.model, "--yolo", "--output-format", "json"],
      env: { OPENAI_BASE_URL: `${r.origin}/api/v1`, OPENAI_API_KEY: r.key, OPENAI_MODEL: r.model },
      files: {
        ".qwen/settings.json": json({
          security: { auth: { selectedType: "openai" } },
          model: { generationConfig: { reasoning: { effort: "medium" } } },
          privacy: { usageStatisticsEnabled: false },
          telemetry: { enabled: false },
          general: { disableAutoUpdate: true, disableUpdateNag: true },
        }),
      },
    }),
    answer: ({ stdout }) => {
      const events = lastJson(stdout);
      return Array.isArray(events) ? events.find((e: any) => e?.type === "result")?.result : undefined;
    },
  },
  {
    id: "gemini-cli",
    pkg: "@google/gemini-cli",
    bin: "gemini",
    protocol: "gemini",
    upstreams: THREE,
    launch: (r) => ({
      args: ["-p", r.prompt, "-m", r.model, "--approval-mode", "yolo", "--output-format", "json"],
      env: { GOOGLE_GEMINI_BASE_URL: `${r.origin}/api`, GEMINI_API_KEY: r.key, GEMINI_CLI_TRUST_WORKSPACE: "true" },
      files: {
        ".gemini/settings.json": json({
          security: { auth: { selectedType: "gemini-api-key" } },
          privacy: { usageStatisticsEnabled: false },
          telemetry: { enabled: false },
          general: { disableAutoUpdate: true, disableUpdateNag: true },
        }),
      },
    }),
    answer: ({ stdout }) => lastJson(stdout)?.response,
  },
];
