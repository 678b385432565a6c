// OpenRouter's `reasoning` object on chat completions (`{effort}`, `{max_tokens}`, `{enabled}`), which Qwen Code and
// other OpenRouter-style clients send to turn thinking on, folded into the `reasoning_effort` every translator, the
// budget and the rate limits read. The object itself goes: only OpenRouter takes it, and OpenAI refuses unknown
// parameters. A `reasoning_effort` sent beside it wins.
import { tokensToEffort } from "../metering/thinking.ts";

export function foldReasoning(body: Record<string, any>): void {
  const r = body.reasoning;
  if (r === undefined) return;
  delete body.reasoning;
  if (body.reasoning_effort !== undefined || !r || typeof r !== "object") return;
  const effort = r.enabled === false ? "none"
    : typeof r.effort === "string" ? r.effort
    : typeof r.max_tokens === "number" ? (r.max_tokens > 0 ? tokensToEffort(r.max_tokens) : "none")
    : r.enabled === true ? "medium"
    : undefined;
  if (effort) body.reasoning_effort = effort;
}
