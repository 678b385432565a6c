// A project's `guardrails:` compiled once per config load (cached by the config object, so a reload compiles anew):
// every rule's detectors, patterns and keywords as global regular expressions, split by the side they act on.
import type { GuardrailModeration, GuardrailRule, GuardrailsConfig } from "../../core/generated/types/gateway.ts";
import { detectorsFor, type Detector, type DetectorKind } from "./detectors/index.ts";

export type Action = "block" | "redact" | "flag";

export interface CompiledRule {
  name: string;
  /** An allow rule acts when nothing matches; a deny rule when something does. */
  allow: boolean;
  action: Action;
  /** redact_with: mask (never restored) rather than placeholders. */
  mask: boolean;
  detectors: Detector[];
  /** Matched values this rule leaves alone. */
  except: RegExp[];
}

export interface Guard {
  input: CompiledRule[];
  output: CompiledRule[];
  moderation?: GuardrailModeration;
  moderateInput: boolean;
  moderateOutput: boolean;
  /** Output rules on streams: characters held back and looked back over. */
  window: number;
  /** A redact rule, on either side: the response cache neither keeps nor serves its answers. */
  redacts: boolean;
  /** The answer is edited in place: a stream's text held back by the output rules, masks, restored values. */
  edits: boolean;
  /** An input redact rule hands out placeholders ([EMAIL_1]), numbered per request. */
  placeholders: boolean;
}

const compiled = new WeakMap<GuardrailsConfig, Guard | null>();

/** The project's compiled guardrails, or null when it has none that do anything. */
export function guardFor(config: GuardrailsConfig): Guard | null {
  let g = compiled.get(config);
  if (g === undefined) compiled.set(config, (g = compile(config)));
  return g;
}

export function compile(config: GuardrailsConfig): Guard | null {
  const rules = (config.rules ?? []).map(compileRule);
  const on = (r: GuardrailRule, side: "input" | "output") => (r.on ?? ["input"]).includes(side);
  const input = rules.filter((_, i) => on(config.rules![i]!, "input"));
  const output = rules.filter((_, i) => on(config.rules![i]!, "output"));
  const m = config.moderation;
  const moderateInput = !!m && (m.on ?? ["input"]).includes("input");
  const moderateOutput = !!m && (m.on ?? ["input"]).includes("output");
  if (!input.length && !output.length && !moderateInput && !moderateOutput) return null;
  const redacts = input.some((r) => r.action === "redact") || output.some((r) => r.action === "redact");
  const edits = output.length > 0 || redacts;
  const placeholders = input.some((r) => r.action === "redact" && !r.mask);
  return { input, output, moderation: m, moderateInput, moderateOutput, window: config.stream_window ?? 64, redacts, edits, placeholders };
}

/** A placeholder label from a rule name: "no-internal.codes" -> NO_INTERNAL_CODES. */
const labelOf = (name: string) => name.toUpperCase().replace(/[^A-Z0-9]+/g, "_").replace(/^_+|_+$/g, "") || "REDACTED";

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** Keywords as one expression: whole words (letters and digits of any script), any case, any run of spaces between words. */
export function keywordExpression(words: readonly string[]): RegExp {
  const alts = [...new Set(words.map((w) => w.trim()).filter(Boolean))]
    .sort((a, b) => b.length - a.length)
    .map((w) => w.split(/\s+/).map(escape).join("\\s+"));
  return new RegExp(`(?<![\\p{L}\\p{N}_])(?:${alts.join("|")})(?![\\p{L}\\p{N}_])`, "giu");
}

export function compileRule(r: GuardrailRule): CompiledRule {
  const label = labelOf(r.name);
  const detectors: Detector[] = detectorsFor((r.detect ?? []) as DetectorKind[]);
  for (const p of r.patterns ?? []) detectors.push({ label, re: new RegExp(p, r.ignore_case ? "giu" : "gu") });
  if (r.keywords?.length) detectors.push({ label, re: keywordExpression(r.keywords) });
  return {
    name: r.name,
    allow: r.type === "allow",
    action: r.action ?? "block",
    mask: r.redact_with === "mask",
    detectors,
    except: (r.except ?? []).map((e) => new RegExp(e, "u")),
  };
}
