import { describe, expect, it } from "vitest";
import { BY_REFERENCE, INLINE, mediaIn } from "./media-refs.ts";

const IMG = "https://example.com/cat.png";
const DATA = "data:image/png;base64,iVBORw0KGgo=";
const user = (content: unknown) => ({ model: "m", messages: [{ role: "user", content }] });

describe("media named by URL or id, or carried inline (input the body's size does not bound)", () => {
  it("chat: an image by URL, a file by id; an inline data: image, file or input_audio", () => {
    expect(mediaIn(user([{ type: "text", text: "?" }, { type: "image_url", image_url: { url: IMG } }]))).toBe(BY_REFERENCE);
    expect(mediaIn(user([{ type: "file", file: { file_id: "file-1" } }]))).toBe(BY_REFERENCE);
    expect(mediaIn(user([{ type: "video_url", video_url: { url: "https://example.com/v.mp4" } }]))).toBe(BY_REFERENCE);
    expect(mediaIn(user([{ type: "image_url", image_url: { url: DATA } }]))).toBe(INLINE);
    expect(mediaIn(user([{ type: "file", file: { file_data: DATA, filename: "a.pdf" } }]))).toBe(INLINE);
    expect(mediaIn(user([{ type: "input_audio", input_audio: { data: "UklGRg==", format: "wav" } }]))).toBe(INLINE);
    expect(mediaIn(user([{ type: "video_url", video_url: { url: "data:video/mp4;base64,AAAA" } }]))).toBe(INLINE);
    expect(mediaIn(user("see https://example.com/cat.png"))).toBe(0);
    expect(mediaIn(user([{ type: "text", text: "data:image/png;base64,AAAA" }]))).toBe(0);
  });

  it("messages: image or document by url or file id, or base64, also inside a tool result; a text document is text", () => {
    expect(mediaIn(user([{ type: "image", source: { type: "url", url: IMG } }]))).toBe(BY_REFERENCE);
    expect(mediaIn(user([{ type: "document", source: { type: "file", file_id: "file_1" } }]))).toBe(BY_REFERENCE);
    expect(mediaIn(user([{ type: "tool_result", tool_use_id: "t", content: [{ type: "image", source: { type: "url", url: IMG } }] }]))).toBe(BY_REFERENCE);
    expect(mediaIn(user([{ type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } }]))).toBe(INLINE);
    expect(mediaIn(user([{ type: "tool_result", tool_use_id: "t", content: [{ type: "document", source: { type: "base64", media_type: "application/pdf", data: "JVBERi0=" } }] }]))).toBe(INLINE);
    expect(mediaIn(user([{ type: "document", source: { type: "text", media_type: "text/plain", data: "Hello" } }]))).toBe(0);
  });

  it("responses: input_image by URL or file id, input_file by URL or id; inline data: and file_data, in a tool output too", () => {
    const input = (part: unknown) => ({ model: "m", input: [{ role: "user", content: [part] }] });
    expect(mediaIn(input({ type: "input_image", image_url: IMG }))).toBe(BY_REFERENCE);
    expect(mediaIn(input({ type: "input_image", file_id: "file-1" }))).toBe(BY_REFERENCE);
    expect(mediaIn(input({ type: "input_file", file_url: "https://example.com/a.pdf" }))).toBe(BY_REFERENCE);
    expect(mediaIn(input({ type: "input_file", file_id: "file-1" }))).toBe(BY_REFERENCE);
    expect(mediaIn(input({ type: "input_image", image_url: DATA }))).toBe(INLINE);
    expect(mediaIn(input({ type: "input_file", file_data: DATA, filename: "a.pdf" }))).toBe(INLINE);
    expect(mediaIn({ model: "m", input: [{ type: "function_call_output", call_id: "c", output: [{ type: "input_image", image_url: DATA }] }] })).toBe(INLINE);
  });

  it("gemini: fileData URIs, cached content; inlineData", () => {
    expect(mediaIn({ contents: [{ role: "user", parts: [{ fileData: { mimeType: "video/mp4", fileUri: "https://generativelanguage.googleapis.com/v1beta/files/x" } }] }] })).toBe(BY_REFERENCE);
    expect(mediaIn({ contents: [{ role: "user", parts: [{ text: "hi" }] }], cachedContent: "cachedContents/abc" })).toBe(BY_REFERENCE);
    expect(mediaIn({ contents: [{ role: "user", parts: [{ inlineData: { mimeType: "image/png", data: "iVBORw0KGgo=" } }] }] })).toBe(INLINE);
  });

  it("gemini inlineData of text (text/*, JSON) is text, bounded by its size: an 8-byte note is not media", () => {
    const part = (mimeType: string) => ({ contents: [{ role: "user", parts: [{ text: "Summarise" }, { inlineData: { mimeType, data: "aGVsbG8gIQ==" } }] }] });
    expect(mediaIn(part("text/plain"))).toBe(0);
    expect(mediaIn(part("text/csv; charset=utf-8"))).toBe(0);
    expect(mediaIn(part("application/json"))).toBe(0);
    expect(mediaIn(part("application/pdf"))).toBe(INLINE);
    expect(mediaIn(part("audio/wav"))).toBe(INLINE);
    expect(mediaIn({ contents: [{ role: "user", parts: [{ inlineData: { data: "aGVsbG8=" } }] }] })).toBe(INLINE);
  });

  it("a tool call's arguments are the client's JSON, not content: media-like fields in them are not media", () => {
    // Claude called a tool with arguments shaped like an image block; the conversation carries them back.
    const args = { type: "image", source: { type: "url", url: IMG }, image_url: { url: DATA } };
    const messages = [
      { role: "user", content: "Fetch the chart" },
      { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "chart", input: args }, { type: "server_tool_use", id: "s1", name: "web_fetch", input: { inlineData: { data: "AAAA" } } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "done" }] },
    ];
    expect(mediaIn({ model: "m", messages })).toBe(0);
    expect(mediaIn({ contents: [{ role: "model", parts: [{ functionCall: { name: "chart", args: { inlineData: { mimeType: "image/png", data: "AAAA" } } } }] }] })).toBe(0);
    // A tool result's image is still media.
    messages[2]!.content = [{ type: "tool_result", tool_use_id: "t1", content: [{ type: "image", source: { type: "url", url: IMG } }] }] as never;
    expect(mediaIn({ model: "m", messages })).toBe(BY_REFERENCE);
  });

  it("both, in one walk that stops at the first media when that is all a reservation needs", () => {
    const both = user([{ type: "image_url", image_url: { url: IMG } }, { type: "image_url", image_url: { url: DATA } }]);
    expect(mediaIn(both)).toBe(BY_REFERENCE | INLINE);
    expect(mediaIn(both, true)).toBe(BY_REFERENCE);
    expect(mediaIn({ contents: [{ parts: [{ inlineData: { mimeType: "image/png", data: "iVBORw0KGgo=" } }] }], cachedContent: "cachedContents/abc" })).toBe(BY_REFERENCE | INLINE);
  });

  it("tool schemas are not searched", () => {
    const tools = [{ type: "function", function: { name: "f", parameters: { type: "object", properties: { file_id: { type: "string" }, image_url: { type: "string" } } } } }];
    expect(mediaIn({ ...user("hi"), tools })).toBe(0);
  });
});
