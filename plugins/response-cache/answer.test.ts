import { describe, expect, it } from "vitest";
import { completeStream, keepsJson } from "./answer.ts";

const data = (o: unknown) => ({ data: JSON.stringify(o) });
const named = (event: string, o: unknown) => ({ event, data: JSON.stringify({ type: event, ...(o as object) }) });

describe("completeStream", () => {
  it("chat: ends with [DONE] and carries no error", () => {
    const ok = [data({ choices: [{ delta: { content: "Hi" } }] }), { data: "[DONE]" }];
    expect(completeStream("openai", ok)).toBe(true);
    expect(completeStream("openai", ok.slice(0, 1))).toBe(false);
    expect(completeStream("openai", [data({ error: { message: "upstream died" } }), { data: "[DONE]" }])).toBe(false);
  });

  it("messages: ends with message_stop, and an error event spoils it", () => {
    const ok = [named("message_start", {}), named("content_block_delta", {}), named("message_stop", {})];
    expect(completeStream("anthropic", ok)).toBe(true);
    expect(completeStream("anthropic", ok.slice(0, 2))).toBe(false);
    expect(completeStream("anthropic", [...ok.slice(0, 2), named("error", { error: { type: "overloaded_error" } }), ok[2]!])).toBe(false);
  });

  it("responses: ends with response.completed (not failed or incomplete)", () => {
    expect(completeStream("responses", [named("response.created", {}), named("response.completed", {})])).toBe(true);
    expect(completeStream("responses", [named("response.created", {}), named("response.failed", {})])).toBe(false);
    expect(completeStream("responses", [named("response.created", {}), named("response.incomplete", {})])).toBe(false);
  });

  it("gemini: the last chunk names a finishReason", () => {
    const text = data({ candidates: [{ content: { parts: [{ text: "Hi" }] } }] });
    expect(completeStream("gemini", [text, data({ candidates: [{ finishReason: "STOP" }] })])).toBe(true);
    expect(completeStream("gemini", [text])).toBe(false);
    expect(completeStream("gemini", [])).toBe(false);
  });
});

describe("keepsJson", () => {
  it("a 2xx JSON answer; a Responses API answer only when completed", () => {
    expect(keepsJson({ kind: "json", status: 200, body: {} }, "chat")).toBe(true);
    expect(keepsJson({ kind: "json", status: 400, body: {} }, "chat")).toBe(false);
    expect(keepsJson({ kind: "json", status: 200, body: { status: "completed" } }, "responses")).toBe(true);
    expect(keepsJson({ kind: "json", status: 200, body: { status: "incomplete" } }, "responses")).toBe(false);
  });
});
