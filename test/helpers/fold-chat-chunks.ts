/**
 * Streamed chat choices folded as a client does: content joined, tool calls gathered by index, the last finish
 * reason — to compare a translator's stream with its JSON answer.
 */
export function foldChatChoices(choices: any[]): { content: string | null; tool_calls?: unknown[]; finish_reason: unknown } {
  const calls: any[] = [];
  for (const c of choices) {
    for (const tc of c.delta.tool_calls ?? []) {
      calls[tc.index] ??= { id: tc.id, type: "function", function: { name: tc.function.name, arguments: "" } };
      calls[tc.index].function.arguments += tc.function.arguments;
    }
  }
  const content = choices.map((c) => c.delta.content ?? "").join("");
  return { content: content || null, tool_calls: calls.length ? calls : undefined, finish_reason: choices.at(-1)?.finish_reason };
}
