// The reasoning knobs an OpenAI-protocol endpoint refuses, taken out of the body and named (x-mg-dropped-params).
// A model the gateway knows cannot reason (its entry lists tags without `reasoning`: GPT-4.1, GPT-4o, Llama...)
// answers 400 to any effort (OpenAI: "Unsupported parameter: 'reasoning.effort' is not supported with this model.",
// and "Encrypted content is not supported with this model." to include's reasoning.encrypted_content), which Codex
// and Qwen Code send whatever the model. A model that reasons on its own without the knob (catalog reasoning_effort:
// false, xAI's grok-4) refuses the effort alone. An entry without tags is not known either way: it gets what was sent.
import type { Target } from "../../core/contracts/provider.ts";
import { isReasoningTarget } from "./reasoning-params.ts";

/** Known not to reason: tags without `reasoning`, and an upstream id that is not an OpenAI reasoning model (o3 on an own entry). */
export const cannotReason = (target: Target): boolean => target.reasoning === false && !isReasoningTarget(target);

const refusesEffort = (target: Target): boolean => target.acceptsReasoningEffort === false || cannotReason(target);

/**
 * A chat body (`out`, rewritten in place): reasoning_effort where refused. Returns why it went when it held a real
 * value (not null): "unreasoning" (a translation's client is told its own field) or "no-knob" (named reasoning_effort
 * whatever the client, as docs/providers.md says of grok), else undefined.
 */
export function dropChatEffort(out: Record<string, unknown>, target: Target): "unreasoning" | "no-knob" | undefined {
  if (out.reasoning_effort === undefined || !refusesEffort(target)) return undefined;
  const real = out.reasoning_effort !== null;
  delete out.reasoning_effort;
  if (!real) return undefined;
  return target.acceptsReasoningEffort === false ? "no-knob" : "unreasoning";
}

/**
 * A Responses body passed through (`out`, rewritten in place): reasoning.effort where refused; on a model that cannot
 * reason also reasoning.summary (generate_summary, its old name) and include's reasoning.encrypted_content, and a
 * `reasoning` left empty goes whole. Returns the fields dropped that held a value, as the client names them.
 */
export function dropResponsesReasoning(out: Record<string, unknown>, target: Target): string[] {
  const dropped: string[] = [];
  const r = out.reasoning;
  if (r && typeof r === "object" && !Array.isArray(r) && refusesEffort(target)) {
    const kept: Record<string, unknown> = { ...(r as Record<string, unknown>) };
    const keys = cannotReason(target) ? ["effort", "summary", "generate_summary"] : ["effort"];
    for (const k of keys) {
      if (!(k in kept)) continue;
      if (kept[k] !== null && kept[k] !== undefined) dropped.push(`reasoning.${k}`);
      delete kept[k];
    }
    if (Object.keys(kept).length) out.reasoning = kept;
    else delete out.reasoning;
  }
  if (Array.isArray(out.include) && cannotReason(target) && out.include.includes("reasoning.encrypted_content")) {
    const include = out.include.filter((k) => k !== "reasoning.encrypted_content");
    dropped.push("include.reasoning.encrypted_content");
    if (include.length) out.include = include;
    else delete out.include;
  }
  return dropped;
}
