import { describe, expect, it } from "vitest";
import { referencesMedia } from "./media-refs.ts";

const IMG = "https://example.com/cat.png";
const DATA = "data:image/png;base64,iVBORw0KGgo=";
const user = (content: unknown) => ({ model: "m", messages: [{ role: "user", content }] });

describe("media named by URL or id (input the body's size does not bound)", () => {
  it("chat: an image by URL, a file by id; not an inline data: image or file", () => {
    expect(referencesMedia(user([{ type: "text", text: "?" }, { type: "image_url", image_url: { url: IMG } }]))).toBe(true);
    expect(referencesMedia(user([{ type: "file", file: { file_id: "file-1" } }]))).toBe(true);
    expect(referencesMedia(user([{ type: "video_url", video_url: { url: "https://example.com/v.mp4" } }]))).toBe(true);
    expect(referencesMedia(user([{ type: "image_url", image_url: { url: DATA } }]))).toBe(false);
    expect(referencesMedia(user([{ type: "file", file: { file_data: DATA, filename: "a.pdf" } }]))).toBe(false);
    expect(referencesMedia(user("see https://example.com/cat.png"))).toBe(false);
  });

  it("messages: image or document by url or file id, also inside a tool result; not base64", () => {
    expect(referencesMedia(user([{ type: "image", source: { type: "url", url: IMG } }]))).toBe(true);
    expect(referencesMedia(user([{ type: "document", source: { type: "file", file_id: "file_1" } }]))).toBe(true);
    expect(referencesMedia(user([{ type: "tool_result", tool_use_id: "t", content: [{ type: "image", source: { type: "url", url: IMG } }] }]))).toBe(true);
    expect(referencesMedia(user([{ type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } }]))).toBe(false);
  });

  it("responses: input_image by URL or file id, input_file by URL or id; not file_data", () => {
    const input = (part: unknown) => ({ model: "m", input: [{ role: "user", content: [part] }] });
    expect(referencesMedia(input({ type: "input_image", image_url: IMG }))).toBe(true);
    expect(referencesMedia(input({ type: "input_image", file_id: "file-1" }))).toBe(true);
    expect(referencesMedia(input({ type: "input_file", file_url: "https://example.com/a.pdf" }))).toBe(true);
    expect(referencesMedia(input({ type: "input_file", file_id: "file-1" }))).toBe(true);
    expect(referencesMedia(input({ type: "input_image", image_url: DATA }))).toBe(false);
    expect(referencesMedia(input({ type: "input_file", file_data: DATA, filename: "a.pdf" }))).toBe(false);
  });

  it("gemini: fileData URIs (either case), cached content; not inlineData", () => {
    expect(referencesMedia({ contents: [{ role: "user", parts: [{ fileData: { mimeType: "video/mp4", fileUri: "https://generativelanguage.googleapis.com/v1beta/files/x" } }] }] })).toBe(true);
    expect(referencesMedia({ contents: [{ role: "user", parts: [{ text: "hi" }] }], cachedContent: "cachedContents/abc" })).toBe(true);
    expect(referencesMedia({ contents: [{ role: "user", parts: [{ inlineData: { mimeType: "image/png", data: "iVBORw0KGgo=" } }] }] })).toBe(false);
  });

  it("tool schemas are not searched", () => {
    const tools = [{ type: "function", function: { name: "f", parameters: { type: "object", properties: { file_id: { type: "string" }, image_url: { type: "string" } } } } }];
    expect(referencesMedia({ ...user("hi"), tools })).toBe(false);
  });
});
