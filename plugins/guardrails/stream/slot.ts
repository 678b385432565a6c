// One stream slot's text (a choice's content, a content block, an output_text part, a tool call's arguments) on its way
// to the client, in two stages:
//  1. output rules, over a sliding window: text is released once `window` characters have come after it, and each
//     check looks back over the last `window` characters released, so a match cut across chunks is still whole when
//     it is checked (a block cuts the stream before the chunk that completes it; a redaction masks it). A JSON
//     slot is checked as it decodes (`\u0047` as "G", an escape cut across chunks waiting for its end), as the
//     client's parser will read it; what a redaction masks is the raw text those characters came from. On a block,
//     the text that had cleared the window before the earliest block match (and before any match reaching into it),
//     redactions made, is kept for end() to send before the error. Text still inside the window is dropped: it may
//     open another rule's match whose end has not come yet, and a regex cannot tell whether it would;
//  2. placeholders restored: a tail that may be the start of a placeholder ("[EMA") waits for the next chunk, and no
//     more than that (Vault.partialTail).
// Projects without output rules skip stage 1 (nothing is held for it); requests that redacted nothing skip stage 2.
// Both stages log their edits (moves.ts) and count what they let through, so an annotation indexing into the slot's
// text (a url_citation) can wait until its text went out and then be moved to where that text is in the client's.
import type { GuardRun, Hit } from "../check.ts";
import { findHits, redactions } from "../check.ts";
import { blocked, note } from "../record.ts";
import { decodeEscapes } from "./json-escapes.ts";
import { TextMoves } from "../moves.ts";

export class SlotText {
  /** Raw text not yet released by stage 1. */
  private pending = "";
  /** The raw text of the last `window` characters released (already checked; looked back over). */
  private lookback = "";
  /** The lookback's length decoded (json slots; the same as its length when it has no escape). */
  private lookbackChars = 0;
  /** Released text held by stage 2 (a possible placeholder start). */
  private held = "";
  /** Once a block rule matched: the text before the match, checked and restored, that end() sends (then nothing). */
  private beforeBlock: string | undefined;
  /** Each stage's edits, at positions counted from the slot's start. */
  readonly moves = new TextMoves();
  /** Upstream characters through stage 1, stage 1's characters through stage 2, characters sent. */
  private checked = 0;
  private restored = 0;
  private sent = 0;

  /** `json`: the slot is a JSON document streamed as text (tool arguments): restored values go in escaped. */
  constructor(private readonly run: GuardRun, private readonly json: boolean) {}

  /** The text to send now for this delta ("" when all of it waits). Throws GUARDRAIL_BLOCKED. */
  push(delta: string): string {
    return this.restore(this.check(delta, false), false);
  }

  /** The slot is done (or the stream is): everything left, checked and restored; after a block, what preceded it. */
  end(): string {
    if (this.beforeBlock !== undefined) {
      const rest = this.beforeBlock;
      this.beforeBlock = "";
      return rest;
    }
    return this.restore(this.check("", true), true);
  }

  /** Whether the upstream's text up to `end` went out (stage 1 let it through, and stage 2 what it became). */
  covers(end: number): boolean {
    return end <= this.checked && this.moves.masks.move(end, true) <= this.restored;
  }

  /** Where position `p` of the upstream's text is in the text sent (never past what was sent). */
  move(p: number, isEnd: boolean): number {
    return this.moves.move(p, isEnd, this.sent);
  }

  /** Whether a block rule cut this slot (its clean text before the match waits in end()). */
  get cut(): boolean {
    return this.beforeBlock !== undefined;
  }

  private check(delta: string, final: boolean): string {
    const rules = this.run.guard.output;
    if (!rules.length) {
      this.checked += delta.length;
      return delta;
    }
    const window = this.run.guard.window;
    const pending = this.pending + delta;
    if (!pending) return "";
    const lb = this.lookback.length;
    const raw = this.lookback + pending;
    // JSON slots are checked as they decode (an escaped key is still a key); positions below are decoded characters,
    // `at` takes one back to the raw text (the same when there was no backslash).
    const decoded = this.json ? decodeEscapes(raw, final) : undefined;
    const map = decoded?.map;
    const text = map ? decoded!.text : raw;
    const at = map ? (i: number) => map[i]! : (i: number) => i;
    const offset = map ? this.lookbackChars : lb;
    const ready = text.length - offset; // pending characters decoded (an escape cut at the end waits)
    this.run.topic(text.slice(offset), rules, "output");
    // Only matches that reach into the new text: those wholly in the lookback acted when they were new.
    const hits = findHits(text, rules).filter((h) => h.end > offset);
    let cut = final ? ready : Math.max(0, ready - window);
    let first: Hit | undefined;
    for (const h of hits) if (h.rule.action === "block" && (!first || h.order < first.order)) first = h;
    if (first) {
      // The stream ends here: the client first gets what comes before the earliest block match, but never past the
      // window's hold-back (even at the end): text still inside it may open a match that is not a hit yet.
      let blockAt = Infinity;
      for (const h of hits) if (h.rule.action === "block") blockAt = Math.min(blockAt, h.start);
      cut = Math.min(Math.max(0, ready - window), Math.max(0, blockAt - offset));
    }
    // Never release part of a match: it may still grow (a longer key), or run into the blocked text.
    if (first || !final) {
      for (let moved = true; moved; ) {
        moved = false;
        for (const h of hits) if (h.start - offset < cut && h.end - offset > cut) (cut = Math.max(0, h.start - offset)), (moved = true);
      }
    }
    for (const h of hits) if (h.rule.action === "flag" && (!first || h.end - offset <= cut)) note(this.run.ctx, h.rule.name, "flag");
    const rawCut = at(offset + cut) - lb;
    const out = pending.slice(0, rawCut);
    this.pending = pending.slice(rawCut);
    const inRelease = redactions(hits)
      .filter((h) => h.end - offset <= cut)
      .map((h) => ({ ...h, start: Math.max(0, at(h.start) - lb), end: at(h.end) - lb }));
    if (first) {
      this.beforeBlock = this.restore(this.run.redact(out, inRelease, "output"), true);
      this.pending = "";
      throw blocked(this.run.ctx, first.rule.name, "output");
    }
    // The last `window` characters released, starting where an escape starts.
    const from = Math.max(0, offset + cut - window);
    this.lookback = window ? raw.slice(at(from), lb + rawCut) : "";
    this.lookbackChars = window ? offset + cut - from : 0;
    const base = this.checked;
    this.checked += rawCut;
    return this.run.redact(out, inRelease, "output", (s, e, n) => this.moves.masks.add(base + s, base + e, n));
  }

  private restore(text: string, final: boolean): string {
    const vault = this.run.vault;
    if (vault.size === 0) {
      this.restored += text.length;
      this.sent += text.length;
      return text;
    }
    const all = this.held + text;
    const at = final ? all.length : vault.partialTail(all);
    this.held = all.slice(at);
    const base = this.restored;
    this.restored += at;
    const out = vault.restore(all.slice(0, at), this.json, (s, e, n) => this.moves.restores.add(base + s, base + e, n));
    this.sent += out.length;
    return out;
  }
}
