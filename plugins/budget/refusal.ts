// The 402 a budgeted request gets, worded for what the user can do about it. Three cases differ:
// - the spend has used the budget up ("has reached its monthly budget"): wait for the period, or raise it;
// - this request's worst case does not fit in what is left (0.3 % spent, a large max_tokens): ask for less, or raise
//   it — saying "has reached" then sent operators looking for a spent budget that was not. "Less" is the output
//   limit only when lowering it could make the request fit; when its input alone is over what is left (a continued
//   conversation or media, reserved up to the context window) it is told what that input is instead;
// - only other requests' holds are in the way: the refusal is transient, and the SDKs are told to retry.
import { GatewayError } from "../../core/errors.ts";
import { picoToUsd, type DerivedPrice } from "../../core/money/money.ts";
import { usdText, usdTextOf } from "../../core/money/usd-text.ts";
import type { Period } from "../../core/store/types.ts";
import type { GatewayContext } from "../../core/pipeline/context.ts";
import { reservedInputs, type ReservedInput } from "./unbounded-input.ts";

/** The period as the 402 message names it ("daily", not "dayly"). */
const ADJECTIVE: Record<Period, string> = { day: "daily", week: "weekly", month: "monthly", total: "total" };

/** When a refusal only in-flight holds caused may be tried again: they settle (mostly for less) as their requests end. */
const IN_FLIGHT_RETRY_AFTER_S = 1;

/** When the period's spend starts over (a total budget never does). */
function periodEnd(period: Period, start: number): string | undefined {
  const d = new Date(start);
  switch (period) {
    case "day": return new Date(start + 86_400_000).toISOString();
    case "week": return new Date(start + 7 * 86_400_000).toISOString();
    case "month": return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)).toISOString();
    default: return undefined;
  }
}

export interface Refused {
  project: string;
  /** The key whose own budget refused, when it is not the project's. */
  key?: string;
  usd: string;
  period: Period;
  /** When the period began (its end is the refusal's resets_at). */
  periodStart: number;
  limitPico: bigint;
  spentPico: bigint;
  /** Held by requests in flight. */
  reservedPico: bigint;
  /** This request's worst case (0 for count_tokens, which reserves nothing). */
  amountPico: bigint;
  /** A generation's worst case without output (worst-case.ts): what no output limit can lower. */
  withoutOutputPico?: bigint;
  /** The price per input token withoutOutputPico holds its input at, and its pricing key (worst-case.ts). */
  inputPrice?: { pico: bigint; key: string; derived?: DerivedPrice };
  /** Web searches reserved, counted in withoutOutputPico. */
  webSearches?: number;
  /** Model turns reserved when more than one (the Responses mcp loop, mcp.max_tool_rounds): the amounts cover all. */
  modelTurns?: number;
  /**
   * Model calls reserved when more than the turns: server tools pass over the context once more for each call of
   * theirs the request allows (core/metering/server-tools.ts); the amounts cover all.
   */
  modelCalls?: number;
  /** Where the client states a smaller server-tool limit (max_uses, max_tool_calls), lowering modelCalls. */
  limitField?: string;
}

/**
 * What the client can ask for less of, in its own protocol's terms: the output limit of a generation (the field it
 * sent, or the one to set when it left the limit to the model, whose maximum was then reserved), else what a media
 * request's worst case grows with.
 */
export function lowerHint(endpoint: string, body: Record<string, unknown> | undefined): string {
  const gen = body?.generationConfig as Record<string, unknown> | undefined;
  const output = (field: string, sent: boolean) => (sent ? `lower ${field}` : `set ${field} (without it the model's largest output is reserved)`);
  switch (endpoint) {
    case "chat":
      return body?.max_completion_tokens != null ? output("max_completion_tokens", true) : output("max_tokens", body?.max_tokens != null);
    case "messages":
      return output("max_tokens", true); // the Messages API requires it
    case "responses":
      return output("max_output_tokens", body?.max_output_tokens != null);
    case "gemini":
      return output("generationConfig.maxOutputTokens", gen?.maxOutputTokens != null);
    case "images":
      return "ask for fewer images (n)";
    case "videos":
      return "ask for a shorter duration";
    default:
      return "send less input";
  }
}

/** What each reserved input is, as the refusal says it (`by`: the field a stored conversation is continued by). */
function inputWords(kind: Exclude<ReservedInput, "request_body">, by: string | undefined): string {
  switch (kind) {
    case "stored_conversation": return `continues a stored conversation (${by})`;
    case "stored_prompt": return "names a stored prompt (prompt)";
    case "server_tools": return "enables server tools (their results count as input)";
    case "media_by_reference": return "names media or files the upstream fetches by URL or file id";
    case "inline_media": return "carries inline media (base64 images, audio or documents, billed by what they show, not by their size)";
  }
}

/** The mcp loop's turns, each reserved as a request of its own: said, or a client sees a 402 for a small request. */
const turns = (n: number | undefined) => (n && n > 1 ? `, ${n} model turns of its mcp tool (mcp.max_tool_rounds)` : "");
/** Server tools' model calls, each reserved as a request of its own: said, with how to reserve fewer. */
const calls = (n: number | undefined) => (n && n > 1 ? `, ${n} model calls: one more for each call of its server tools it allows` : "");
/** The field that lowers the server tools' calls, in the client's words; none when the request has no such field. */
function fewerCalls(r: Refused): string[] {
  if (!r.modelCalls) return [];
  if (r.limitField === "max_uses") return ["set a smaller max_uses on its web_search and web_fetch tools (fewer calls, less reserved)"];
  if (r.limitField === "max_tool_calls") return ["set a smaller max_tool_calls (fewer calls, less reserved)"];
  return [];
}

/** "a, b or raise the budget". */
const orRaise = (...what: string[]) => [...what, "raise the budget"].reduce((a, b, i, all) => (i === all.length - 1 ? `${a} or ${b}` : `${a}, ${b}`));

/** "a", "a and b", "a, b and c". */
const list = (items: string[]) => (items.length < 2 ? items.join("") : `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`);

/** The input price as a catalog lists it: USD per million tokens. */
const perMillion = (pico: bigint) => picoToUsd(pico * 1_000_000n);

/**
 * The price the reserved input is held at, said when it is not the plain input price a user would compute with: the
 * audio price (what the gateway cannot see may be audio) or a cache-write price (which part is written is unknown).
 */
function priceWords(price: Refused["inputPrice"]): string {
  if (!price || price.key === "input") return "";
  const why = price.key === "input_audio" ? "its audio input price (input_audio), as part of it may be audio"
    : `its cache-write price (${price.key}${derivedWords(price.derived)}): how much of it is written to the cache is unknown`;
  return ` at ${usdText(price.pico * 1_000_000n)} per million tokens, ${why}`;
}

/** A price the pricing does not state, named by the key it was made from: the operator looking for it finds that one. */
function derivedWords(derived: DerivedPrice | undefined): string {
  if (!derived) return "";
  return `, not configured: ${derived.times === 2 ? `twice ${derived.from}` : `${derived.from}'s price`}`;
}

/**
 * Why a request whose input alone is over what is left does not fit, and what to do: raise the budget, or send less
 * input when all of it is in the body. No output field is named: no output limit could make it fit.
 */
function inputTooLarge(r: Refused, ctx: Pick<GatewayContext, "endpoint" | "body">): { words: string; kinds: ReservedInput[] } {
  const { kinds, continuedBy } = reservedInputs(ctx);
  const share = `, ${usdText(r.withoutOutputPico!)} of it for ${r.webSearches ? "input and web searches" : "input"}`;
  if (kinds[0] === "request_body") return { words: `${share}: send less input or raise the budget`, kinds };
  const why = list(kinds.map((k) => inputWords(k as Exclude<ReservedInput, "request_body">, continuedBy)));
  const each = r.modelCalls ? " for each model call" : "";
  return { words: `${share}: it ${why}, so its input is reserved up to the model's context window${each}${priceWords(r.inputPrice)}; ${orRaise(...fewerCalls(r))}`, kinds };
}

/**
 * The 402 a request gets when the project's (or the key's own) budget has no room for it. When the spend alone leaves
 * room for this request and only other requests' holds are in the way, the budget is not spent: the refusal is
 * transient, says so, and carries x-should-retry: true and a short Retry-After (the openai and Anthropic SDKs retry
 * a 402 then). The spec gives budget refusals 402 BUDGET_EXCEEDED and has no status for "not now", so it stays that.
 */
export function budgetRefusal(r: Refused, ctx: Pick<GatewayContext, "endpoint" | "body">): GatewayError {
  const { project, key, usd, period, limitPico, spentPico, reservedPico, amountPico } = r;
  const left = limitPico - spentPico - reservedPico;
  const available = left > 0n ? left : 0n;
  const who = key === undefined ? `Project "${project}"` : `Key "${key}" of project "${project}"`;
  const budget = `${ADJECTIVE[period]} budget of ${usdTextOf(usd)}`;
  const held = reservedPico > 0n ? `, ${usdText(reservedPico)} held by requests in flight` : "";
  const inFlight = amountPico > 0n && reservedPico > 0n && spentPico + amountPico <= limitPico;
  const tooLarge = !inFlight && amountPico > 0n && spentPico < limitPico;
  // Lowering the output limit cannot help when what it does not bound is already over what the spend leaves (holds
  // in flight aside: they settle, so fewer output tokens may fit then).
  const input = tooLarge && r.withoutOutputPico !== undefined && r.withoutOutputPico >= limitPico - spentPico
    ? inputTooLarge(r, ctx) : undefined;
  let message: string;
  if (inFlight) {
    message = `${who} has no room in its ${budget} right now: requests in flight hold ${usdText(reservedPico)} of it` +
      ` (spent ${usdText(spentPico)}) and this request may cost up to ${usdText(amountPico)}; retry once they finish`;
  } else if (tooLarge) {
    message = `${who} has ${usdText(available)} left of its ${budget} (spent ${usdText(spentPico)}${held}),` +
      ` less than this request may cost (${usdText(amountPico)} at most${turns(r.modelTurns)}${calls(r.modelCalls)})` +
      (input ? input.words : `: ${orRaise(lowerHint(ctx.endpoint, ctx.body), ...fewerCalls(r))}`);
  } else {
    message = `${who} has reached its ${budget}` +
      ` (spent ${usdText(spentPico)}, ${usdText(reservedPico)} held by requests in flight)` +
      (amountPico > 0n ? `; this request may cost up to ${usdText(amountPico)}` : "");
  }
  const resetsAt = periodEnd(period, r.periodStart);
  const reason = inFlight ? "held_by_requests_in_flight" : input ? "request_input_over_available" : tooLarge ? "request_max_over_available" : undefined;
  return new GatewayError(402, "BUDGET_EXCEEDED", message, {
    details: {
      project, ...(key !== undefined ? { key, scope: "key" } : {}), period, budget_usd: usd, spent_usd: picoToUsd(spentPico), reserved_usd: picoToUsd(reservedPico),
      available_usd: picoToUsd(available), request_max_usd: picoToUsd(amountPico), ...(resetsAt ? { resets_at: resetsAt } : {}),
      ...(reason ? { reason } : {}),
      ...(input ? { input_max_usd: picoToUsd(r.withoutOutputPico!), reserved_input: input.kinds } : {}),
      ...(input && r.inputPrice ? { input_price_per_million: perMillion(r.inputPrice.pico), input_price_key: r.inputPrice.key } : {}),
      ...(input && r.inputPrice?.derived ? { input_price_derived_from: r.inputPrice.derived.from } : {}),
    },
    ...(inFlight ? { retryAfter: IN_FLIGHT_RETRY_AFTER_S, headers: { "x-should-retry": "true" } } : {}),
  });
}
