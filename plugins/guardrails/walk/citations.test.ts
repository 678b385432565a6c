// Citations into a document whose values were redacted: the client gets its own document back in them (cited_text
// restored, char indices counting the text it sent), in JSON answers and in streamed citations_delta events.
import { describe, expect, it } from "vitest";
import type { SseEvent } from "../../../core/sse/parse.ts";
import { runFor } from "../testkit.ts";
import { guardStream } from "../stream/index.ts";
import { walkRequest } from "./request.ts";
import { fixCitations, toOriginal } from "./citations.ts";

const DOC = "Contact: alice.smith@example.com. Office hours 9-5. Billing: bob@example.com, weekdays.";
const PDF = { type: "document", source: { type: "base64", media_type: "application/pdf", data: "JVBERi0=" } };

/** The request a client sends (a PDF first: document_index counts every document), through the guardrails. */
function sent(mask = false) {
  const run = runFor({ rules: [{ name: "pii", detect: ["email"], action: "redact", ...(mask ? { redact_with: "mask" as const } : {}) }] }, "anthropic");
  const body: any = {
    messages: [{ role: "user", content: [PDF, { type: "document", title: "Team of bob@example.com", source: { type: "text", media_type: "text/plain", data: DOC }, citations: { enabled: true } }, { type: "text", text: "Who handles billing?" }] }],
  };
  walkRequest("anthropic", body, (t, topic, doc) => (doc === undefined ? run.input(t, topic) : run.inputDocument(t, topic, doc)));
  return { run, seen: body.messages[0].content[1].source.data as string, title: body.messages[0].content[1].title as string };
}

/** A citation as Anthropic makes it: the document the provider saw, sliced at char offsets. */
function cite(seen: string, title: string, quote: string) {
  const s = seen.indexOf(quote);
  return { type: "char_location", cited_text: quote, document_index: 1, document_title: title, start_char_index: s, end_char_index: s + quote.length };
}

describe("citations into redacted documents", () => {
  it("JSON answer: cited_text and document_title restored, char indices into the client's document", () => {
    const { run, seen, title } = sent();
    expect(seen).not.toContain("@example.com");
    const quote = "Billing: [EMAIL_1], weekdays."; // the title's address was numbered first
    const answer: any = { content: [{ type: "text", text: "Bob", citations: [cite(seen, title, quote)] }] };
    fixCitations(answer, run);
    const c = answer.content[0].citations[0];
    expect(c.cited_text).toBe("Billing: bob@example.com, weekdays.");
    expect(DOC.slice(c.start_char_index, c.end_char_index)).toBe(c.cited_text);
    expect(c.document_title).toBe("Team of bob@example.com");
  });

  it("a citation cutting through a placeholder widens to the whole value", () => {
    const { run, seen, title } = sent();
    const s = seen.indexOf("[EMAIL_2]") + 3;
    const answer: any = { content: [{ type: "text", text: "x", citations: [{ ...cite(seen, title, "x"), cited_text: seen.slice(s, s + 12), start_char_index: s, end_char_index: s + 12 }] }] };
    fixCitations(answer, run);
    const c = answer.content[0].citations[0];
    expect(c.cited_text).toBe("alice.smith@example.com. Offi");
    expect(DOC.slice(c.start_char_index, c.end_char_index)).toBe(c.cited_text);
  });

  it("masked values stay masked in cited_text, the indices still count the client's document", () => {
    const { run, seen, title } = sent(true);
    const quote = "Office hours 9-5.";
    const answer: any = { content: [{ type: "text", text: "9-5", citations: [cite(seen, title, quote)] }] };
    fixCitations(answer, run);
    const c = answer.content[0].citations[0];
    expect(DOC.slice(c.start_char_index, c.end_char_index)).toBe(quote);
  });

  it("streamed citations_delta events are turned back the same way", async () => {
    const { run, seen, title } = sent();
    const ev = (event: string, data: object): SseEvent => ({ event, data: JSON.stringify({ type: event, ...data }) });
    const events = [
      ev("content_block_start", { index: 0, content_block: { type: "text", text: "", citations: [] } }),
      ev("content_block_delta", { index: 0, delta: { type: "citations_delta", citation: cite(seen, title, "Contact: [EMAIL_2].") } }),
      ev("content_block_delta", { index: 0, delta: { type: "text_delta", text: "Alice" } }),
      ev("content_block_stop", { index: 0 }),
      ev("message_stop", {}),
    ];
    const out: SseEvent[] = [];
    for await (const e of guardStream(run.ctx, run, (async function* () { yield* events; })())) out.push(e);
    const c = out.map((e) => JSON.parse(e.data)).find((d) => d.delta?.type === "citations_delta").delta.citation;
    expect(c.cited_text).toBe("Contact: alice.smith@example.com.");
    expect(DOC.slice(c.start_char_index, c.end_char_index)).toBe(c.cited_text);
    expect(c.document_title).toBe("Team of bob@example.com");
  });

  it("toOriginal: positions before, inside and after replacements", () => {
    const edits = [{ start: 2, end: 10, length: 3, masked: false }, { start: 12, end: 13, length: 5, masked: false }];
    expect([0, 2, 3, 5, 7, 8, 9, 12, 14].map((r) => toOriginal(edits, r, false))).toEqual([0, 2, 2, 10, 12, 12, 12, 13, 15]);
    expect(toOriginal(edits, 4, true)).toBe(10);
  });
});
