// What an MCP server lists (a tool with its inputSchema, a prompt, a resource) is held to the nesting bound of a
// request body (core/http/json-shape.ts): past it, the recursive steps after the list (comparing lists for
// list_changed, cloning, JSON.stringify into the upstream request) would overflow the stack. The walk itself is
// bounded by that depth, so a 150 000-deep schema costs 128 steps, not a stack overflow.
import { checkJsonShape, MAX_JSON_DEPTH } from "../http/json-shape.ts";

/** Why one listed item cannot be used (`tool "deep": its inputSchema nests deeper than 128 levels`), or undefined. */
export function tooDeep(kind: string, item: unknown): string | undefined {
  const problem = checkJsonShape(item);
  if (problem?.kind !== "depth") return undefined;
  const member = /^[^.[]+/.exec(problem.field)?.[0] ?? "definition";
  const name = (item as { name?: unknown; uri?: unknown } | null)?.name ?? (item as { uri?: unknown } | null)?.uri;
  const what = `${kind.replace(/s(:.*)?$/, "")}${typeof name === "string" ? ` "${name.slice(0, 200)}"` : ""}`;
  return `${what}: its ${member} nests deeper than ${MAX_JSON_DEPTH} levels`;
}

/**
 * The items a list keeps: a client's own server (`refuse`) fails the list on the first item too deep (the request
 * names its tools[i]); a configured server's list goes on without it, each one left out reported through `leftOut`.
 */
export function withinDepth<T>(kind: string, items: T[], refuse: boolean, leftOut: (why: string) => void): T[] {
  const kept: T[] = [];
  for (const item of items) {
    const why = tooDeep(kind, item);
    if (!why) kept.push(item);
    else if (refuse) throw new Error(why);
    else leftOut(why);
  }
  return kept;
}
