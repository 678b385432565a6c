// One request's guardrail run: the rules applied to each piece of text the walkers hand over (request text before it
// leaves, answer text before the client sees it), the placeholders handed out and restored, and the allow rules'
// verdict once all the text was seen.
import type { GatewayContext } from "../../core/pipeline/context.ts";
import { findAll, type Span } from "./detectors/index.ts";
import type { CompiledRule, Guard } from "./compile.ts";
import { Vault } from "./vault.ts";
import { blocked, note, type Side } from "./record.ts";
import { geminiContinuesStored, responsesContinuesStored } from "./walk/stored-state.ts";
import type { OnEdit, TextMoves } from "./moves.ts";

export interface Hit extends Span {
  rule: CompiledRule;
  /** The rule's position on its side: the earlier rule wins an overlap. */
  order: number;
}

/** The deny rules' matches in `text` (minus their `except` values), in no particular order. */
export function findHits(text: string, rules: readonly CompiledRule[]): Hit[] {
  const hits: Hit[] = [];
  const spans: Span[] = [];
  for (let order = 0; order < rules.length; order++) {
    const rule = rules[order]!;
    if (rule.allow) continue;
    spans.length = 0;
    for (const d of rule.detectors) findAll(d, text, spans);
    for (const s of spans) {
      if (rule.except.length && rule.except.some((re) => re.test(text.slice(s.start, s.end)))) continue;
      hits.push({ ...s, rule, order });
    }
  }
  return hits;
}

/** Whether an allow rule finds anything of its topic in `text`. */
export function mentions(rule: CompiledRule, text: string): boolean {
  const spans: Span[] = [];
  for (const d of rule.detectors) {
    findAll(d, text, spans);
    if (spans.length) return true;
  }
  return false;
}

/** The redactions to make: earliest first, an overlap going to the earlier rule, then to the longer match. */
export function redactions(hits: Hit[]): Hit[] {
  const r = hits.filter((h) => h.rule.action === "redact").sort((a, b) => a.start - b.start || a.order - b.order || b.end - a.end);
  const out: Hit[] = [];
  let end = -1;
  for (const h of r) {
    if (h.start < end) continue;
    out.push(h);
    end = h.end;
  }
  return out;
}

/** What one side's rules make of a piece of text: the earliest rule's block, the flags, the redactions to make. */
export interface Judged {
  block?: Hit;
  flags: Hit[];
  redact: Hit[];
}

/** The rules over `text` (undefined: nothing matched); how each outcome acts is the caller's. */
export function judge(text: string, rules: readonly CompiledRule[]): Judged | undefined {
  const hits = findHits(text, rules);
  if (!hits.length) return undefined;
  let block: Hit | undefined;
  for (const h of hits) if (h.rule.action === "block" && (!block || h.order < block.order)) block = h;
  return { ...(block ? { block } : {}), flags: hits.filter((h) => h.rule.action === "flag"), redact: redactions(hits) };
}

/** `text` with each of `hits` (sorted, not overlapping) replaced by what `put` makes of it. */
export function spliced(text: string, hits: readonly Hit[], put: (h: Hit, value: string) => string): string {
  if (!hits.length) return text;
  let out = "", at = 0;
  for (const h of hits) {
    out += text.slice(at, h.start) + put(h, text.slice(h.start, h.end));
    at = h.end;
  }
  return out + text.slice(at);
}

/** A value taken out for good: never restored. */
export const maskOf = (h: Hit): string => `[REDACTED:${h.label}]`;

/**
 * Which allow rules one side's text mentioned, once there was text to judge. A rule on both sides is satisfied once
 * per request: sides given the same `satisfied` set share it (the user's turn about billing passes the answer too).
 */
export class TopicsSeen {
  saw = false;

  constructor(private readonly satisfied = new Set<CompiledRule>()) {}

  see(text: string, rules: readonly CompiledRule[]): void {
    this.saw = true;
    for (const r of rules) if (r.allow && !this.satisfied.has(r) && mentions(r, text)) this.satisfied.add(r);
  }

  /** The allow rules none of whose topic was seen (none when there was no text to judge). */
  unmet(rules: readonly CompiledRule[]): CompiledRule[] {
    return this.saw ? rules.filter((r) => r.allow && !this.satisfied.has(r)) : [];
  }
}

/** One redaction in a document: the original span [start, end) became `length` characters. */
export interface Edit {
  start: number;
  end: number;
  length: number;
  /** A mask (never restored), not a placeholder. */
  masked: boolean;
}

/** A text document as the client sent it and as it left, with the edits between them (in order). */
export interface RedactedDocument {
  original: string;
  redacted: string;
  edits: Edit[];
}

export class GuardRun {
  readonly vault = new Vault();
  /** The allow rules satisfied so far, on either side (see TopicsSeen). */
  private readonly satisfied = new Set<CompiledRule>();
  private readonly topics: Record<Side, TopicsSeen> = { input: new TopicsSeen(this.satisfied), output: new TopicsSeen(this.satisfied) };
  /** Messages text documents this request redacted, by document_index: citations into them are mapped back. */
  readonly documents = new Map<number, RedactedDocument>();
  /** Where redact() notes its edits while a document is being checked. */
  private edits: Edit[] | undefined;
  /** The answer's output moderation, once per request (stored.ts, moderatedAnswer). */
  answerModeration: Promise<void> | undefined;
  /** A streamed answer's text so far (set by its stream's check): what output moderation judges, for the record too. */
  streamedAnswer: (() => string) | undefined;

  constructor(readonly ctx: GatewayContext, readonly guard: Guard) {}

  /**
   * One piece of request text: blocks throw GUARDRAIL_BLOCKED, flags are noted, redactions come back in the text
   * (placeholders for the vault, or masks). `topic`: this text counts for the allow rules (the latest user turn).
   */
  input(text: string, topic: boolean): string {
    return this.apply(text, this.guard.input, "input", topic);
  }

  /** A Messages text document's data (document_index `index`): as input(), its redactions kept for citations. */
  inputDocument(text: string, topic: boolean, index: number): string {
    const edits: Edit[] = [];
    this.edits = edits;
    let out: string;
    try {
      out = this.input(text, topic);
    } finally {
      this.edits = undefined;
    }
    if (edits.length) this.documents.set(index, { original: text, redacted: out, edits });
    return out;
  }

  /**
   * One piece of answer text (a JSON answer's, or a stream's window): output rules, then placeholders restored.
   * `moves`: where each stage's edits are logged (for the annotations that index into the text).
   */
  output(text: string, moves?: TextMoves): string {
    const checked = this.guard.output.length ? this.apply(text, this.guard.output, "output", true, moves?.masks.add) : text;
    return this.vault.restore(checked, false, moves?.restores.add);
  }

  restore(text: string): string {
    return this.vault.restore(text);
  }

  apply(text: string, rules: readonly CompiledRule[], side: Side, topic: boolean, onEdit?: OnEdit): string {
    if (!text || !rules.length) return text;
    if (topic) this.topic(text, rules, side);
    const judged = judge(text, rules);
    if (!judged) return text;
    if (judged.block) throw blocked(this.ctx, judged.block.rule.name, side);
    for (const h of judged.flags) note(this.ctx, h.rule.name, "flag");
    return this.redact(text, judged.redact, side, onEdit);
  }

  /**
   * `hits` (sorted, not overlapping) replaced: placeholders on the input side unless the rule masks, masks on output.
   * `onEdit`: told each replacement (positions in `text`).
   */
  redact(text: string, hits: readonly Hit[], side: Side, onEdit?: OnEdit): string {
    return spliced(text, hits, (h, value) => {
      note(this.ctx, h.rule.name, "redact");
      const masked = side === "output" || h.rule.mask;
      const put = masked ? maskOf(h) : this.vault.placeholder(h.label, value);
      this.edits?.push({ start: h.start, end: h.end, length: put.length, masked });
      onEdit?.(h.start, h.end, put.length);
      return put;
    });
  }

  /** `text` counts for the allow rules of `side`: those it mentions are satisfied. */
  topic(text: string, rules: readonly CompiledRule[], side: Side): void {
    this.topics[side].see(text, rules);
  }

  /**
   * A request with no user text of its own that continues stored state (a tool output going back on
   * previous_response_id, a Gemini cachedContent) has its user turn in that state, judged when it was sent: an allow
   * rule on both sides counts as met, as that turn would have met it here, so the answer need not carry the topic
   * (as a chat or Messages tool loop, which sends the turn again, passes). A rule on the answer only still wants it.
   */
  private turnJudgedWhenSent(): void {
    if (this.topics.input.saw || !this.continuesStored()) return;
    for (const r of this.guard.input) if (r.allow && this.guard.output.includes(r)) this.satisfied.add(r);
  }

  private continuesStored(): boolean {
    const body = this.ctx.body as any;
    if (this.ctx.protocol === "responses") return responsesContinuesStored(body);
    return this.ctx.protocol === "gemini" && geminiContinuesStored(body, body?.generateContentRequest);
  }

  /** The answer's topics as a copy (the stored record's judge): what the request satisfied already counts. */
  answerTopics(): TopicsSeen {
    return new TopicsSeen(new Set(this.satisfied));
  }

  /** After all of one side's text: allow rules none of whose topic was seen act (when there was text to judge). */
  allowVerdict(side: Side): void {
    if (side === "input") this.turnJudgedWhenSent();
    for (const r of this.topics[side].unmet(side === "input" ? this.guard.input : this.guard.output)) {
      if (r.action === "block") throw blocked(this.ctx, r.name, side);
      note(this.ctx, r.name, "flag");
    }
  }
}
