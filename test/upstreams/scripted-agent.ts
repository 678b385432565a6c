// The scripted "model" the fake upstreams play for coding agents (npm run test:agents and the replay of its
// recordings): asked `AGENT-TASK path=<file> content=<text>`, it first calls the agent's own write-file tool (found by
// name in the tools the agent offers, its arguments built from that tool's schema), and once the tool's result is
// back it answers FINAL_ANSWER. In a continued session the newest task is the one in hand. Requests without the task (an agent's side calls: titles, routing, summaries) are
// left to the fake's usual answers.
import { toolInput } from "./schema-sample.ts";

/** A tool as every fake sees it, whatever the wire format: its name and JSON Schema (absent for free-form tools). */
export interface OfferedTool { name: string; schema?: any }

/** What the model does this turn: call one tool, or answer text. */
export type AgentTurn = { call: { name: string; input: Record<string, unknown> | string } } | { text: string };

export type AgentScript = (turn: { tools: OfferedTool[]; text: string; answered: boolean }) => AgentTurn | undefined;

export const FINAL_ANSWER = "Done: the file is written. AGENT-TASK-COMPLETE";

/** The prompt an agent is given (the marker the script reads, then words for a human reading a transcript). */
export const taskPrompt = (path: string, content: string) =>
  `AGENT-TASK path=${path} content=${content}\nCreate the file ${path} containing exactly ${content} using your file-writing tool, then say you are done.`;

const TASK = /AGENT-TASK path=(\S+) content=(\S+)/g;

/** Write tools by name, most specific first: a dedicated write tool beats a patch tool beats a shell. */
const WRITERS = ["Write", "write_file", "write", "create_file", "apply_patch", "shell_command", "shell", "exec_command", "run_shell_command", "bash", "Bash"];

/** Codex's apply_patch format: one added file. */
const addFilePatch = (path: string, content: string) => `*** Begin Patch\n*** Add File: ${path}\n+${content}\n*** End Patch\n`;
const shellWrite = (path: string, content: string) => `printf '%s\\n' '${content}' > '${path}'`;

function callFor(tool: OfferedTool, path: string, content: string): AgentTurn {
  const props = tool.schema?.properties ?? {};
  if (!tool.schema) return { call: { name: tool.name, input: addFilePatch(path, content) } }; // a free-form (custom) tool
  const pathKey = ["file_path", "filePath", "path", "absolute_path"].find((k) => k in props);
  let base: Record<string, unknown>;
  if (pathKey && "content" in props) base = { [pathKey]: path, content };
  else if (["patchText", "input", "patch"].some((k) => k in props)) base = { [["patchText", "input", "patch"].find((k) => k in props)!]: addFilePatch(path, content) };
  else {
    const key = "cmd" in props ? "cmd" : "command";
    base = { [key]: String(props[key]?.type).toLowerCase() === "array" ? ["bash", "-lc", shellWrite(path, content)] : shellWrite(path, content) };
  }
  return { call: { name: tool.name, input: toolInput(tool.schema, base) } };
}

export const agentScript: AgentScript = ({ tools, text, answered }) => {
  const task = [...text.matchAll(TASK)].at(-1);
  if (!task) return undefined;
  if (answered) return { text: FINAL_ANSWER };
  const tool = WRITERS.map((n) => tools.find((t) => t.name === n || t.name.endsWith(`__${n}`))).find(Boolean);
  return tool ? callFor(tool, task[1]!, task[2]!) : undefined;
};

/** Every string in a request's conversation, one per line: where the script looks for its task. */
export function conversationText(value: unknown): string {
  const out: string[] = [];
  const walk = (v: unknown): void => {
    if (typeof v === "string") out.push(v);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === "object") Object.values(v).forEach(walk);
  };
  walk(value);
  return out.join("\n");
}
