// One user turn on each client protocol (chat completions, messages, responses, the Gemini API), JSON or streamed,
// as raw HTTP the way the SDKs send it, and the answer's text read back the way each protocol delivers it (message
// content, text deltas, output_text deltas, candidate parts). Errors come back as the code and rule they name, whether
// the gateway answered with a 4xx or ended a stream with the protocol's error event; a Messages stream a guardrail
// blocked ends as a refusal instead (stop_reason "refusal", stop_details naming the rule, and a text block saying so,
// left out of the text): read as GUARDRAIL_BLOCKED and that rule.
import { SseParser, type SseEvent } from "../../core/sse/parse.ts";

export type Protocol = "chat" | "messages" | "responses" | "gemini";
export const PROTOCOLS: Protocol[] = ["chat", "messages", "responses", "gemini"];

export interface Answer {
  status: number;
  /** The answer's text as the client would show it. */
  text: string;
  /** Everything the client received, as text. */
  raw: string;
  events: SseEvent[];
  json?: any;
  /** An error's code (GUARDRAIL_BLOCKED, ...), from a JSON error or an in-stream error event. */
  errorCode?: string;
  /** The rule an error names (details.rule, or the Gemini ErrorInfo metadata). */
  rule?: string;
  /** The body ended without its terminator: a Gemini stream an upstream failure ends is cut after its error frame (docs/gemini.md "Streams"). */
  cut?: boolean;
}

/** The whole body as text, or what arrived before the connection was cut. */
async function readBody(res: Response): Promise<{ raw: string; cut: boolean }> {
  const reader = res.body?.getReader();
  if (!reader) return { raw: "", cut: false };
  const decoder = new TextDecoder();
  let raw = "";
  for (;;) {
    const step = await reader.read().catch(() => undefined);
    if (!step) return { raw: raw + decoder.decode(), cut: true };
    if (step.done) return { raw: raw + decoder.decode(), cut: false };
    raw += decoder.decode(step.value, { stream: true });
  }
}

function request(protocol: Protocol, model: string, user: string, stream: boolean): { path: string; body: Record<string, unknown> } {
  switch (protocol) {
    case "chat":
      return { path: "/api/v1/chat/completions", body: { model, stream, max_tokens: 200, messages: [{ role: "system", content: "Be brief." }, { role: "user", content: user }] } };
    case "messages":
      return { path: "/api/v1/messages", body: { model, stream, max_tokens: 200, system: "Be brief.", messages: [{ role: "user", content: [{ type: "text", text: user }] }] } };
    case "responses":
      return { path: "/api/v1/responses", body: { model, stream, instructions: "Be brief.", input: [{ role: "user", content: [{ type: "input_text", text: user }] }] } };
    case "gemini":
      return {
        path: `/api/v1beta/models/${model}:${stream ? "streamGenerateContent?alt=sse" : "generateContent"}`,
        body: { systemInstruction: { parts: [{ text: "Be brief." }] }, contents: [{ role: "user", parts: [{ text: user }] }] },
      };
  }
}

function jsonText(protocol: Protocol, j: any): string {
  switch (protocol) {
    case "chat":
      return j?.choices?.[0]?.message?.content ?? "";
    case "messages":
      return (j?.content ?? []).filter((b: any) => b.type === "text").map((b: any) => b.text).join("");
    case "responses":
      return (j?.output ?? []).flatMap((it: any) => (it.type === "message" ? it.content : [])).filter((p: any) => p.type === "output_text").map((p: any) => p.text).join("");
    case "gemini":
      return (j?.candidates?.[0]?.content?.parts ?? []).map((p: any) => p.text ?? "").join("");
  }
}

function streamText(protocol: Protocol, events: SseEvent[]): string {
  let out = "";
  for (const ev of events) {
    let d: any;
    try {
      d = JSON.parse(ev.data);
    } catch {
      continue;
    }
    if (protocol === "chat") out += d?.choices?.[0]?.delta?.content ?? "";
    else if (protocol === "messages" && ev.event === "content_block_delta" && d.delta?.type === "text_delta" && !GUARDRAIL_REFUSAL.test(d.delta.text)) out += d.delta.text;
    else if (protocol === "responses" && ev.event === "response.output_text.delta") out += d.delta;
    else if (protocol === "gemini") out += (d?.candidates?.[0]?.content?.parts ?? []).map((p: any) => p.text ?? "").join("");
  }
  return out;
}

/** The text block a Messages stream a guardrail blocked ends with, and the rule its refusal's explanation names. */
const GUARDRAIL_REFUSAL = /^\[The answer was blocked by guardrail "[^"]*"\]$/;
const REFUSAL_RULE = /^The answer was blocked by guardrail "([^"]*)"$/;

function errorOf(j: any): { code?: string; rule?: string } {
  const e = j?.error;
  if (!e) return {};
  const info = Array.isArray(e.details) ? e.details.find((d: any) => d?.reason) : undefined;
  if (info) return { code: info.reason, rule: info.metadata?.rule };
  return { code: e.code, rule: e.details?.rule };
}

export async function ask(url: string, key: string, protocol: Protocol, model: string, user: string, stream: boolean): Promise<Answer> {
  const { path, body } = request(protocol, model, user, stream);
  const res = await fetch(url + path, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${key}` }, body: JSON.stringify(body) });
  const { raw, cut } = await readBody(res);
  const isStream = (res.headers.get("content-type") ?? "").startsWith("text/event-stream");
  if (!isStream) {
    let json: any;
    try {
      json = JSON.parse(raw);
    } catch {
      json = undefined;
    }
    const err = errorOf(json);
    return { status: res.status, text: res.ok ? jsonText(protocol, json) : "", raw, events: [], json, errorCode: err.code, rule: err.rule };
  }
  const events = new SseParser().push(raw + "\n\n");
  let err: { code?: string; rule?: string } = {};
  for (const ev of events) {
    try {
      const d = JSON.parse(ev.data);
      if (d?.error) err = errorOf(d);
      const refusal = d?.type === "message_delta" && d.delta?.stop_reason === "refusal" ? REFUSAL_RULE.exec(d.delta.stop_details?.explanation ?? "") : null;
      if (refusal) err = { code: "GUARDRAIL_BLOCKED", rule: refusal[1] };
    } catch {
      // not JSON ([DONE])
    }
  }
  return { status: res.status, text: streamText(protocol, events), raw, events, errorCode: err.code, rule: err.rule, cut };
}
