// OpenAI's reasoning models (o-series, GPT-5), recognised from the upstream id as the OpenAI clients do, and the least
// reasoning effort each takes. In core because a translator and the OpenAI-protocol driver both need them: the driver
// fits a request to such a model (providers/openai-compatible/reasoning-params.ts), and a translator carries a
// client's "thinking off" to it as the effort closest to off.
import type { Target } from "../contracts/provider.ts";

const idOf = (upstreamModel: string) => upstreamModel.slice(upstreamModel.lastIndexOf("/") + 1).toLowerCase();

/**
 * o1, o3-mini, o4-mini... and every GPT-5 but its `-chat` variants (gpt-5-chat-latest takes the classic
 * parameters), as the Vercel AI SDK and the OpenAI Agents SDK tell them apart. A routing prefix (`openai/o3` on
 * an aggregator) is looked through.
 */
export function isOpenAIReasoningModel(upstreamModel: string): boolean {
  const id = idOf(upstreamModel);
  if (/^o\d+(?:-|$)/.test(id)) return true;
  return /^gpt-5(?:[.-]|$)/.test(id) && !/^gpt-5(?:\.\d+)?-chat(?:-|$)/.test(id);
}

/** The catalog's flag when the operator set it, else what the upstream id says. */
export function isReasoningTarget(target: Pick<Target, "reasoningModel" | "upstreamModel">): boolean {
  return target.reasoningModel ?? isOpenAIReasoningModel(target.upstreamModel);
}

/**
 * The effort closest to thinking off that an OpenAI reasoning model takes: `none` from GPT-5.1 on, `minimal` on
 * gpt-5, gpt-5-mini and gpt-5-nano (which refuse `none`), `low` on the o-series, Codex models and a deployment name
 * that says nothing; undefined on the `-pro` models, which take nothing that low, and on a model that is not one.
 */
export function leastOpenAIEffort(target: Pick<Target, "reasoningModel" | "upstreamModel">): string | undefined {
  if (!isReasoningTarget(target)) return undefined;
  const id = idOf(target.upstreamModel);
  if (/-pro(?:-|$)/.test(id)) return undefined;
  if (/codex/.test(id)) return "low";
  if (/^gpt-5\.\d+(?:-mini|-nano)?(?:-\d{4}-\d\d-\d\d)?$/.test(id)) return "none";
  if (/^gpt-5(?:-mini|-nano)?(?:-\d{4}-\d\d-\d\d)?$/.test(id)) return "minimal";
  return "low";
}
