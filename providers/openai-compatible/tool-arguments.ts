// A tool call's `arguments` is a JSON string on the Chat Completions wire (protocols.md §1.3), but some
// OpenAI-compatible hosts send it as a JSON object. Relayed so, a chat client gets an object where its SDK expects a
// string (the SDK's stream helper makes it "[object Object]") and a translation to Messages loses the input; so it is
// turned into the string it stands for before anything reads it.

/** Turns each object `arguments` in `calls` (tool_calls, or one legacy function_call) into its JSON text; true if any was. */
function stringifyCalls(calls: unknown): boolean {
  let changed = false;
  const list = Array.isArray(calls) ? calls : [calls];
  for (const c of list) {
    const fn = c?.function ?? c;
    if (fn && typeof fn === "object" && fn.arguments !== null && typeof fn.arguments === "object") {
      fn.arguments = JSON.stringify(fn.arguments);
      changed = true;
    }
  }
  return changed;
}

/**
 * A chat completion (`message`) or chunk (`delta`) with every tool call's `arguments` a string; changed in place
 * (the answer was just parsed from the upstream's bytes: nothing else holds it). True if anything changed.
 */
export function stringifyToolArguments(answer: unknown, part: "message" | "delta"): boolean {
  const choices = (answer as { choices?: unknown } | null)?.choices;
  if (!Array.isArray(choices)) return false;
  let changed = false;
  for (const c of choices) {
    const m = c?.[part];
    if (!m || typeof m !== "object") continue;
    if (m.tool_calls) changed = stringifyCalls(m.tool_calls) || changed;
    if (m.function_call) changed = stringifyCalls(m.function_call) || changed;
  }
  return changed;
}
