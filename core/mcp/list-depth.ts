// What an MCP server lists (a tool with its inputSchema, a prompt, a resource) is held to the nesting bound of a
// request body (core/http/json-shape.ts's MAX_JSON_DEPTH): past it, the recursive steps after the list (comparing
// lists for list_changed, cloning, JSON.stringify into the upstream request) would overflow the stack. Only depth is
// measured here, whatever the values hold (a `1e999` before the deep branch must not end the walk early), and the
// walk keeps its own stack, stopping at the bound, so a 150 000-deep schema costs 128 levels of work, not recursion.
import { MAX_JSON_DEPTH } from "../http/json-shape.ts";

/** The top-level member under which `item` nests past MAX_JSON_DEPTH levels ("" for the item itself), or undefined. */
export function deepMember(item: unknown): string | undefined {
  if (item === null || typeof item !== "object") return undefined;
  // Each entry: a container, how deep it sits, and the top-level member it hangs under.
  const stack: { value: object; depth: number; member: string }[] = [{ value: item, depth: 0, member: "" }];
  while (stack.length > 0) {
    const { value, depth, member } = stack.pop()!;
    if (depth >= MAX_JSON_DEPTH) return member;
    const entries: [string, unknown][] = Array.isArray(value)
      ? value.map((v, i) => [String(i), v])
      : Object.entries(value as Record<string, unknown>);
    for (const [key, child] of entries) {
      if (child !== null && typeof child === "object") {
        stack.push({ value: child, depth: depth + 1, member: depth === 0 ? key : member });
      }
    }
  }
  return undefined;
}

/** Why one listed item cannot be used (`tool "deep": its inputSchema nests deeper than 128 levels`), or undefined. */
export function tooDeep(kind: string, item: unknown): string | undefined {
  const found = deepMember(item);
  if (found === undefined) return undefined;
  const member = found === "" || Array.isArray(item) ? "definition" : found;
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
