// Guardrails in process (issue 30): what the built-in detectors cost and catch, against a maintained library.
//   accuracy: the labelled corpus of plugins/guardrails/detectors/corpus.ts (values that must be found whole, and
//             look-alikes that must not be reported): found / missed / false reports per detector set;
//   speed:    a ~4 KB prompt holding a few of each kind of value — each detector kind alone, all of them, the rules of
//             a request (walk + detect + placeholders) on a 20-message chat, and a 50-chunk answer stream with
//             placeholders restored across chunks against the same stream passed through untouched, and a 500-delta
//             answer full of brackets after 100 000 placeholders were handed out against after one.
// @openredaction/openredaction (regex-first PII library, 558+ patterns) is not a dependency; without it its rows are
// skipped (`npm i --no-save @openredaction/openredaction@1.0.4` to compare). Measured when choosing, in the README of
// this bench's section (docs/guardrails.md, "Why our own detectors").
import { assert, assertEqual, runGroup, type BenchTask } from "./lib.ts";
import { DETECTORS, detectorsFor, findAll, type DetectorKind, type Span } from "../plugins/guardrails/detectors/index.ts";
import { NEGATIVES, POSITIVES } from "../plugins/guardrails/detectors/corpus.ts";
import { guardContext, runFor } from "../plugins/guardrails/testkit.ts";
import { walkRequest } from "../plugins/guardrails/walk/request.ts";
import { guardStream } from "../plugins/guardrails/stream/index.ts";
import type { SseEvent } from "../core/sse/parse.ts";

const KINDS = Object.keys(DETECTORS) as DetectorKind[];
const PARAGRAPH = "Please update the customer record: the new contact is maria.gonzalez@example.org (phone +34 612 345 678), " +
  "paid with card 4111 1111 1111 1111 from IBAN ES91 2100 0418 4502 0005 1332. Her DNI is 12345678Z. The old ticket " +
  "mentions release 2.4.1 on 2024-05-06, order 98765 and the deploy key AKIAIOSFODNN7EXAMPLE, which must be rotated. ";
const TEXT = PARAGRAPH.repeat(Math.ceil(4096 / PARAGRAPH.length)).slice(0, 4096);

function ours(text: string, kinds: readonly DetectorKind[] = KINDS): Span[] {
  const out: Span[] = [];
  for (const d of detectorsFor(kinds)) findAll(d, text, out);
  return out;
}

// --- the library, when installed ------------------------------------------------------------------------------------
type Lib = { detect(text: string): { detections: Array<{ type: string; value: string }> } | Promise<{ detections: Array<{ type: string; value: string }> }> };
let lib: Lib | undefined;
try {
  const m: any = await import("@openredaction/openredaction" as string);
  lib = new m.OpenRedaction({ includeNames: false, includeAddresses: false });
} catch {
  lib = undefined;
}

// --- accuracy (printed once, not timed) -----------------------------------------------------------------------------
async function accuracy(name: string, find: (text: string) => Promise<string[]>): Promise<string[]> {
  let found = 0, missed = 0, wrong = 0;
  const misses: string[] = [];
  for (const s of POSITIVES) {
    const got = await find(s.text);
    for (const [, value] of s.find) {
      if (got.includes(value)) found++;
      else (missed++, misses.push(value.slice(0, 24)));
    }
  }
  for (const t of NEGATIVES) wrong += (await find(t)).length;
  return [name, String(found), String(missed), String(wrong), misses.slice(0, 6).join(" | ")];
}

const rows = [["detector set", "found", "missed", "false reports (look-alikes)", "first misses"]];
rows.push(await accuracy("built-in detectors (all kinds)", async (t) => ours(t).map((s) => t.slice(s.start, s.end))));
if (lib) rows.push(await accuracy("@openredaction/openredaction (defaults, names/addresses off)", async (t) => (await lib!.detect(t)).detections.map((d) => d.value)));
else rows.push(["@openredaction/openredaction", "-", "-", "-", "not installed: skipped"]);
const w = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
process.stdout.write(`== detector accuracy on the labelled corpus (${POSITIVES.reduce((n, s) => n + s.find.length, 0)} values, ${NEGATIVES.length} look-alike texts)\n`);
process.stdout.write(`${rows.map((r) => r.map((c, i) => (i === 0 || i === 4 ? c.padEnd(w[i]!) : c.padStart(w[i]!))).join("  ")).join("\n")}\n\n`);

// --- speed ------------------------------------------------------------------------------------------------------------
const detectTasks: BenchTask[] = [
  { name: "all kinds", fn: () => ours(TEXT), check: () => assert(ours(TEXT).length >= 6 * 5, "the prompt's values are found") },
  ...KINDS.map((k) => ({ name: k, fn: () => ours(TEXT, [k]) })),
];
if (lib) detectTasks.push({ name: "@openredaction/openredaction", fn: () => lib!.detect(TEXT) });
await runGroup("detectors on a 4 KB prompt", detectTasks, { baseline: "all kinds", perItem: { count: 4, unit: "KB" } });

const PII = { rules: [{ name: "pii", detect: ["email", "phone", "card", "iban", "national_id"] as DetectorKind[], action: "redact" as const }] };
const SECRETS = { rules: [{ name: "no-secrets", detect: ["secret"] as DetectorKind[], action: "block" as const }] };
/** 19 turns of ~200 characters each after a system prompt. */
const chatBody = (turn: string) => ({
  messages: [
    { role: "system", content: "You are a helpful assistant." },
    ...Array.from({ length: 19 }, (_, i) => ({ role: i % 2 ? "assistant" : "user", content: turn })),
  ],
});
const WITH_PII = "Contact maria.gonzalez@example.org or +34 612 345 678 about card 4111 1111 1111 1111; the refund goes to ES91 2100 0418 4502 0005 1332 once the ticket for release 2.4.1 is closed.";
const CLEAN = "The quarterly report covers revenue, churn and the roadmap for the next release of the mobile app, with a summary for the board and notes for each team lead on what changes.";
// One context for every run, as requests share a gateway (its metrics registry); each run is a request's.
const ctx = guardContext();
await runGroup("request rules on a 20-message chat (~4 KB of text)", [
  { name: "walk only (no rules)", fn: () => walkRequest("openai", chatBody(WITH_PII), (t) => t) },
  {
    name: "pii redaction, text with PII",
    fn: () => { const run = runFor(PII, "openai", ctx); walkRequest("openai", chatBody(WITH_PII), (t, topic) => run.input(t, topic)); },
    check: () => { const run = runFor(PII); const b = chatBody(WITH_PII); walkRequest("openai", b, (t, topic) => run.input(t, topic)); assert(JSON.stringify(b).includes("[EMAIL_1]") && !JSON.stringify(b).includes("maria.gonzalez"), "redacted"); },
  },
  { name: "pii redaction, clean text", fn: () => { const run = runFor(PII, "openai", ctx); walkRequest("openai", chatBody(CLEAN), (t, topic) => run.input(t, topic)); } },
  { name: "secrets (block), clean text", fn: () => { const run = runFor(SECRETS, "openai", ctx); walkRequest("openai", chatBody(CLEAN), (t, topic) => run.input(t, topic)); } },
], { baseline: "walk only (no rules)" });

// A 50-chunk chat answer echoing two placeholders, each cut across two chunks.
const WORDS = Array.from({ length: 46 }, (_, i) => ` word${i}`);
const PIECES = ["Writing to [EMA", "IL_1] now", ...WORDS.slice(0, 20), " and [CA", "RD_1].", ...WORDS.slice(20)];
const chunkEvents = (): SseEvent[] => [
  ...PIECES.map((p) => ({ data: JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: { content: p }, finish_reason: null }] }) })),
  { data: JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }) },
  { data: "[DONE]" },
];
async function* source(events: SseEvent[]) { yield* events; }
async function drain(events: AsyncIterable<SseEvent>): Promise<SseEvent[]> {
  const out: SseEvent[] = [];
  for await (const e of events) out.push(e);
  return out;
}
function guarded(rules: typeof PII, output = false) {
  const cfg = output ? { rules: [...rules.rules, { name: "no-secrets", detect: ["secret"] as DetectorKind[], on: ["output" as const], action: "block" as const }] } : rules;
  const run = runFor(cfg, "openai", ctx);
  run.input("to maria.gonzalez@example.org with 4111 1111 1111 1111", false);
  return guardStream(run.ctx, run, source(chunkEvents()));
}
const textOf = (evs: SseEvent[]) => evs.filter((e) => e.data !== "[DONE]").map((e) => JSON.parse(e.data).choices[0].delta.content ?? "").join("");
await runGroup("a 50-chunk answer stream", [
  { name: "passed through (no guardrail)", fn: () => drain(source(chunkEvents())) },
  {
    name: "placeholders restored across chunks",
    fn: () => drain(guarded(PII)),
    check: async () => {
      const text = textOf(await drain(guarded(PII)));
      assertEqual([text.slice(0, 41), text.includes(" and 4111 1111 1111 1111.")], ["Writing to maria.gonzalez@example.org now", true], "restored");
    },
  },
  { name: "restored + output secret rule (64-char window)", fn: () => drain(guarded(PII, true)) },
], { baseline: "passed through (no guardrail)", perItem: { count: 52, unit: "event" } });

// The same kind of answer after a request whose every value became a placeholder (100 000 e-mail addresses): 500
// deltas, half a bracket that begins no placeholder ("[a", as markdown links and JSON arrays do), half an echoed one
// cut in two. What a chunk holds back is decided from the labels, so this costs what one placeholder handed out does.
const MANY = 100_000;
const BRACKETS = Array.from({ length: 125 }, (_, i) => [" see [a", " link]", ` to [EMAIL_${MANY - i}`.slice(0, 9), ` to [EMAIL_${MANY - i}].`.slice(9)]).flat();
const bracketEvents = (): SseEvent[] => [
  ...BRACKETS.map((p) => ({ data: JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: { content: p }, finish_reason: null }] }) })),
  { data: "[DONE]" },
];
/** A run that handed out `n` placeholders, made once: a stream reads the vault and leaves it as it was. */
function runWith(n: number) {
  const run = runFor(PII, "openai", ctx);
  for (let i = 1; i <= n; i++) run.vault.placeholder("EMAIL", `user${i}@example.com`);
  return run;
}
const oneHandedOut = runWith(1), manyHandedOut = runWith(MANY);
const bracketStream = (run: ReturnType<typeof runFor>) => drain(guardStream(run.ctx, run, source(bracketEvents())));
await runGroup("a 500-delta answer full of brackets, by placeholders handed out", [
  { name: "1 placeholder handed out", fn: () => bracketStream(oneHandedOut) },
  {
    name: `${MANY.toLocaleString("en")} placeholders handed out`,
    fn: () => bracketStream(manyHandedOut),
    check: async () => {
      const text = textOf(await bracketStream(manyHandedOut));
      assertEqual([text.slice(0, 34), text.includes("[EMAIL_")], [" see [a link] to user100000@exampl", false], "restored");
    },
  },
], { baseline: "1 placeholder handed out", perItem: { count: BRACKETS.length, unit: "delta" } });
