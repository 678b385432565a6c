// A url_citation whose url holds a secret, through the output rules, in all four shapes: chat's message.annotations
// and delta.annotations, Responses' output_text annotations and response.output_text.annotation.added (with the part
// and the final response). A mask in the url's path stays a url that parses; one in its host takes the source out.
import { describe, expect, it } from "vitest";
import type { SseEvent } from "../../../core/sse/parse.ts";
import { runFor } from "../testkit.ts";
import { citedOutput, type TextMoves } from "../moves.ts";
import { guardStream } from "../stream/index.ts";
import { walkAnswer } from "./answer.ts";

const SECRET = "AKIAIOSFODNN7EXAMPLE";
const TEXT = "Paris is the capital. Lyon is not.";
const RULES = { rules: [{ name: "sec", detect: ["secret" as const], on: ["output" as const], action: "redact" as const }] };
/** Three sources: one clean, one with the secret in its host, one with it in its query. */
const SOURCES = [
  { url: "https://paris.example/", title: "P", start_index: 0, end_index: 21 },
  { url: `https://${SECRET}.example/x`, title: "H", start_index: 0, end_index: 21 },
  { url: `https://lyon.example/?k=${SECRET}`, title: "L", start_index: 22, end_index: 34 },
];
const WANT = [
  { url: "https://paris.example/", title: "P" },
  { url: "https://lyon.example/?k=%5BREDACTED:SECRET%5D", title: "L" },
];
const chatShape = () => SOURCES.map(({ url, title, start_index, end_index }) => ({ type: "url_citation", url_citation: { start_index, end_index, url, title } }));
const responsesShape = () => SOURCES.map((s) => ({ type: "url_citation", ...s }));
const sourcesOf = (annotations: any[]) => annotations.map((a) => a.url_citation ?? a).map(({ url, title }: any) => ({ url, title }));

function json(protocol: "openai" | "responses", body: any) {
  const run = runFor(RULES, protocol);
  const visit = (t: string, moves?: TextMoves) => run.output(t, moves);
  walkAnswer(protocol, body, visit, (t, a) => citedOutput(t, a, visit));
  return body;
}

async function streamed(protocol: "openai" | "responses", events: SseEvent[]): Promise<any[]> {
  const run = runFor(RULES, protocol);
  const out: any[] = [];
  for await (const ev of guardStream(run.ctx, run, (async function* () { yield* events; })())) out.push(ev.data === "[DONE]" ? ev.data : JSON.parse(ev.data));
  return out;
}

describe("a web source whose url the output rules mask", () => {
  it("chat JSON: message.annotations keeps the clean source and the one masked in its query, and every url parses", () => {
    const body = json("openai", { object: "chat.completion", choices: [{ index: 0, message: { role: "assistant", content: TEXT, annotations: chatShape() }, finish_reason: "stop" }] });
    const annotations = body.choices[0].message.annotations;
    expect(sourcesOf(annotations)).toEqual(WANT);
    for (const a of annotations) expect(() => new URL(a.url_citation.url)).not.toThrow();
  });

  it("Responses JSON: the output_text's annotations the same", () => {
    const body = json("responses", { object: "response", output: [{ type: "message", id: "m", role: "assistant", content: [{ type: "output_text", text: TEXT, annotations: responsesShape() }] }] });
    expect(sourcesOf(body.output[0].content[0].annotations)).toEqual(WANT);
  });

  it("chat stream: delta.annotations the same", async () => {
    const chunk = (delta: object, finish: string | null = null) => ({ data: JSON.stringify({ id: "c", object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] }) });
    const out = await streamed("openai", [chunk({ content: TEXT }), chunk({ annotations: chatShape() }), chunk({}, "stop"), { data: "[DONE]" }]);
    const annotated = out.flatMap((c) => c.choices ?? []).filter((c: any) => c.delta.annotations);
    expect(annotated.map((c: any) => sourcesOf(c.delta.annotations))).toEqual([WANT]);
  });

  it("chat stream: no delta.annotations when every source's url had the secret in its host", async () => {
    const chunk = (delta: object, finish: string | null = null) => ({ data: JSON.stringify({ id: "c", object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] }) });
    const out = await streamed("openai", [chunk({ content: TEXT }), chunk({ annotations: [chatShape()[1]] }), chunk({}, "stop"), { data: "[DONE]" }]);
    expect(out.flatMap((c) => c.choices ?? []).filter((c: any) => "annotations" in c.delta)).toEqual([]);
  });

  it("Responses stream: no annotation.added for the host one, the others numbered 0 and 1 as in the final response", async () => {
    let seq = 0;
    const ev = (type: string, payload: object) => ({ event: type, data: JSON.stringify({ type, sequence_number: seq++, ...payload }) });
    const at = { item_id: "m", output_index: 0, content_index: 0 };
    const part = () => ({ type: "output_text", text: TEXT, annotations: responsesShape() });
    const out = await streamed("responses", [
      ev("response.output_text.delta", { ...at, delta: TEXT }),
      ...responsesShape().map((annotation, i) => ev("response.output_text.annotation.added", { ...at, annotation_index: i, annotation })),
      ev("response.output_text.done", { ...at, text: TEXT }),
      ev("response.content_part.done", { ...at, part: part() }),
      ev("response.completed", { response: { output: [{ type: "message", id: "m", content: [part()] }] } }),
    ]);
    expect(out.map((e) => e.sequence_number)).toEqual(out.map((_, i) => i));
    const added = out.filter((e) => e.type === "response.output_text.annotation.added");
    expect(added.map((e) => [e.annotation_index, e.annotation.url])).toEqual(WANT.map((w, i) => [i, w.url]));
    expect(sourcesOf(out.find((e) => e.type === "response.content_part.done").part.annotations)).toEqual(WANT);
    expect(sourcesOf(out.at(-1).response.output[0].content[0].annotations)).toEqual(WANT);
  });
});
