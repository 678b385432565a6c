// What a stored Responses record keeps of a request this project's guardrails checked (core/responses/stored-view.ts).
// The record is made inside the check, from what the provider saw and answered; it keeps instead what the client was
// given, with every value a redact rule took out as its mask ([REDACTED:EMAIL]): the output rules applied to the
// answer as on the client's, and each placeholder of this request masked, in the answer, the echoed request fields and
// the conversation. Never a placeholder (its number means nothing past this request: a later turn numbers its own) and
// never the value (values are kept in no store). A later turn sends that history as kept, so the provider gets no
// value a rule took out. An answer the output rules refuse is not kept at all, nor one output moderation refuses: the
// record waits for that verdict (storedVerdict), which the client's answer then shares (one call, on the client's text).
import type { GatewayContext } from "../../core/pipeline/context.ts";
import type { AnswerVerdict, KeptParts, StoredView } from "../../core/responses/stored-view.ts";
import type { GuardRun } from "./check.ts";
import { judge, maskOf, spliced, TopicsSeen } from "./check.ts";
import type { CompiledRule } from "./compile.ts";
import { responsesItem, walkAnswer } from "./walk/answer.ts";
import { checkModeration } from "./moderation/index.ts";
import { MAX_MODERATED_CHARS } from "./stream/slots.ts";

const isObj = (v: unknown): v is Record<string, any> => v !== null && typeof v === "object";

/**
 * `value` with `edit` applied to every string in it, copied (never edited in place: the client's answer is the same
 * object). Reasoning items are left as they are: their state is encrypted alongside, and the guardrails leave them.
 */
function mapStrings<T>(value: T, edit: (s: string) => string): T {
  if (typeof value === "string") return edit(value) as T;
  if (Array.isArray(value)) return value.map((v) => mapStrings(v, edit)) as T;
  if (!isObj(value) || value.type === "reasoning") return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = mapStrings(v, edit);
  return out as T;
}

/**
 * The output rules over an answer's text as the client's check applies them (GuardRun.apply and allowVerdict, through
 * the same judge, spliced and TopicsSeen), without its notes or refusals.
 */
class OutputJudge {
  refused = false;
  constructor(private readonly rules: readonly CompiledRule[], private readonly topics: TopicsSeen) {}

  /** The text as the client got it from the rules: masks where they redact; a block marks the answer refused. */
  text = (text: string): string => {
    if (!text || !this.rules.length) return text;
    this.topics.see(text, this.rules);
    const judged = judge(text, this.rules);
    if (!judged) return text;
    if (judged.block) this.refused = true;
    return spliced(text, judged.redact, maskOf);
  };

  /** After all the answer's text: refused by a block, or by an allow rule none of whose topic it has (as allowVerdict). */
  get verdictRefuses(): boolean {
    return this.refused || this.topics.unmet(this.rules).some((r) => r.action === "block");
  }
}

/** The answer's output items as kept: copied, the output rules applied, each placeholder masked. */
function keptOutput(items: unknown[], judge: OutputJudge, run: GuardRun): Record<string, unknown>[] {
  return items.map((it) => {
    const copy = structuredClone(it);
    responsesItem(copy, judge.text);
    return mapStrings(copy, (s) => run.vault.mask(s)) as Record<string, unknown>;
  });
}

/** How this request's stored record keeps its parts. */
export function storedView(run: GuardRun): StoredView {
  return (parts: KeptParts) => {
    if (!run.guard.output.length && !run.vault.size) return parts; // only moderated: kept as given, unless refused
    const judge = new OutputJudge(run.guard.output, run.answerTopics());
    const response: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(parts.response)) {
      response[k] = k === "output" && Array.isArray(v) ? keptOutput(v, judge, run) : mapStrings(v, (s) => run.vault.mask(s));
    }
    const fullOutput = parts.fullOutput && keptOutput(parts.fullOutput, judge, run);
    if (judge.verdictRefuses) return undefined;
    const input = run.vault.size ? mapStrings(parts.input, (s) => run.vault.mask(s)) : parts.input;
    return { response, input, ...(fullOutput ? { fullOutput } : {}) };
  };
}

/**
 * Whether the record may be saved, after output moderation of the client's answer: a refusal, or a failure under
 * fail_closed, keeps nothing. The call is the request's one (moderatedAnswer), so it judges the text the client's check
 * judges: a stream's own text as it was streamed (the final event may carry less: OpenAI's can say output: []), a JSON
 * answer's final object. The client's answer gets the same verdict when the guardrails check it next.
 */
export function storedVerdict(ctx: GatewayContext, run: GuardRun): AnswerVerdict {
  return (response) => moderatedAnswer(ctx, run, run.streamedAnswer?.() ?? outputText(response)).then(() => true, () => false);
}

/** A JSON answer's text as the client's check moderates it, up to MAX_MODERATED_CHARS. */
function outputText(response: Record<string, unknown>): string {
  let text = "";
  // Read only, so no copy: a visit that returns each text as it came leaves every item as it is.
  walkAnswer("responses", { output: response.output }, (t) => {
    if (text.length < MAX_MODERATED_CHARS) text += t.slice(0, MAX_MODERATED_CHARS - text.length);
    return t;
  });
  return text;
}

/** The answer's output moderation, called once per request whoever asks first (the stored record or the client's check). */
export function moderatedAnswer(ctx: GatewayContext, run: GuardRun, answer: string): Promise<void> {
  return (run.answerModeration ??= checkModeration(ctx, run.guard.moderation!, answer, "output"));
}
