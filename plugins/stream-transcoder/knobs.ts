// Extended-thinking knobs apply to native models only (spec, "What the service does" 6). Knobs a target cannot
// honour are dropped and named in x-mg-dropped-params so the client can tell.
const KNOBS = ["reasoningEffort", "reasoningSummary", "thinkingBudget"] as const;

/** Which providerOptions.<provider> knobs each driver protocol understands. */
const SUPPORTED: Record<string, ReadonlySet<string>> = {
  openai: new Set(["reasoningEffort"]),
  anthropic: new Set(["reasoningEffort", "thinkingBudget"]),
  gemini: new Set(["reasoningEffort", "thinkingBudget", "reasoningSummary"]),
  // Bedrock Converse: Claude's thinking; chat-to-converse reports the knobs itself for families without it.
  bedrock: new Set(["reasoningEffort", "thinkingBudget"]),
};

export function droppedKnobs(body: any, protocol: string, provider: string): string[] {
  const out: string[] = [];
  const po = body?.providerOptions;
  if (!po || typeof po !== "object") return out;
  for (const ns in po) {
    if (ns === "gateway") continue;
    const bag = po[ns];
    if (!bag || typeof bag !== "object") continue;
    for (const k of KNOBS) {
      if (bag[k] === undefined) continue;
      // Knobs namespaced for another provider are simply not addressed to this one: report them too, since the
      // client evidently hoped for them.
      if (ns !== provider || !SUPPORTED[protocol]?.has(k)) out.push(`providerOptions.${ns}.${k}`);
    }
  }
  return out;
}
