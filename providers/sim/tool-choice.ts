// Which of the request's tools the simulated model calls. Coding agents (Claude Code, Qwen Code, opencode, Codex,
// Gemini CLI) run what it calls, so the choice is narrow: first a tool whose name says the request's verb (Read for
// "read note.txt"), else one whose name shares a word with the request (get_weather for "weather in Paris"), else
// one whose description starts with the verb; and never, unless tool_choice names it, a tool that launches another
// agent (the new agent's first turn would call tools again, and so on without end).
import { GatewayError } from "../../core/errors.ts";

/** Verbs a request and a tool's name are matched on, each by the words that say it. */
const VERBS: Record<string, string> = {
  read: "read", view: "read", show: "read", open: "read", cat: "read", display: "read",
  write: "write", create: "write", save: "write",
  list: "list", ls: "list",
  edit: "edit", modify: "edit", replace: "edit",
  search: "search", find: "search", grep: "search",
};
/** Words of a tool's name that say what it acts on without narrowing it (write_file is the plain writer). */
const PLAIN_OBJECTS = new Set(["file", "files", "dir", "directory", "folder", "many", "content", "contents"]);
/** Words too common to tie a request to a tool's name. */
const STOP = new Set([
  "the", "and", "for", "you", "your", "with", "what", "this", "that", "from", "are", "was", "were", "its", "can", "will",
  "tell", "about", "please", "say", "says", "into", "onto", "then", "than", "use", "using", "there", "here", "when",
  "which", "who", "how", "why", "all", "any", "not", "but", "has", "have", "had", "does", "did", "out", "get", "set",
]);

export const wordsOf = (text: string): string[] => text.match(/[\p{L}\p{N}_]+/gu) ?? [];
/** A tool name's words: read_file, list-dir, NotebookEdit, LS. */
const nameWords = (name: string) => wordsOf(name.replace(/([a-z0-9])([A-Z])/g, "$1 $2").replace(/[_-]/g, " ").toLowerCase());
/** The verb a word says, inflected too (reads, lists, searches). */
const verbOf = (w: string): string | undefined =>
  VERBS[w] ?? (w.length > 4 ? VERBS[w.replace(/s$/, "")] ?? VERBS[w.replace(/es$/, "")] ?? VERBS[w.replace(/ing$/, "")] : undefined);
const verbsOf = (ws: string[]) => new Set(ws.map(verbOf).filter((v): v is string => !!v));
const telling = (w: string) => w.length > 2 && !STOP.has(w);

const firstSentenceOf = (t: any) => String(t.function.description ?? "").trim().split(/\.\s|\n/)[0] ?? "";

/** A tool that starts another agent: Claude Code's Agent, Qwen Code's agent, opencode's task, Codex's multi_agent_v1. */
export function launchesAgent(t: any): boolean {
  const name = nameWords(t.function.name);
  return name.some((w) => /^(sub)?agents?$/.test(w)) || t.function.name.toLowerCase() === "task" || /\b(sub-?)?agents?\b/i.test(firstSentenceOf(t));
}

/** How well a tool fits the request: [tier, rank within it]; tier 0 is no fit. */
function fit(t: any, userWords: Set<string>, userVerbs: Set<string>): [number, number] {
  const name = nameWords(t.function.name);
  const toolVerbs = verbsOf(name);
  if ([...toolVerbs].some((v) => userVerbs.has(v))) {
    // A name that says the verb and nothing the request did not (Write, read_file) is the tool for it; one that says
    // it of something else (TodoWrite, Codex's view_image for "read note.txt") is not one to call.
    return name.every((w) => verbOf(w) || PLAIN_OBJECTS.has(w) || userWords.has(w)) ? [3, 0] : [0, 0];
  }
  const named = name.filter((w) => telling(w) && userWords.has(w)).length;
  if (named) return [2, named];
  // A description that starts by saying the verb ("Lists the names of files…"); any other word of an agent's long
  // descriptions (a task "list") is shared with any request.
  const opening = verbOf(wordsOf(String(t.function.description ?? "").toLowerCase())[0] ?? "");
  return opening && userVerbs.has(opening) ? [1, 0] : [0, 0];
}

/** The tools the simulated model calls for `userText` (the user's own words in this turn); none means it answers. */
export function chooseTools(body: any, userText: string): any[] {
  const tools: any[] = (body.tools ?? []).filter((t: any) => t?.type === "function" && t.function?.name);
  const choice = body.tool_choice;
  if (!tools.length || choice === "none") return [];
  if (choice && typeof choice === "object") {
    const named = tools.find((t) => t.function.name === choice.function?.name);
    if (!named) throw new GatewayError(400, "INVALID_REQUEST", `tool_choice names "${choice.function?.name}", which is not in tools`, { details: { field: "tool_choice.function.name" } });
    return [named];
  }
  const candidates = tools.filter((t) => !launchesAgent(t));
  const userWords = new Set(wordsOf(userText.toLowerCase()));
  const userVerbs = verbsOf([...userWords]);
  const scored = candidates.map((t) => ({ t, f: fit(t, userWords, userVerbs) })).filter((s) => s.f[0] > 0);
  const max = body.parallel_tool_calls === false ? 1 : 3;
  if (!scored.length) return choice === "required" ? [candidates[0] ?? tools[0]] : [];
  // Only the best: the highest tier, and in it the best rank (ties are called together, up to `max`).
  const [tier, rank] = scored.map((s) => s.f).sort((a, b) => b[0] - a[0] || b[1] - a[1])[0]!;
  return scored.filter((s) => s.f[0] === tier && s.f[1] === rank).slice(0, max).map((s) => s.t);
}
