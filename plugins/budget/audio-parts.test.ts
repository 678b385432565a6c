import { describe, expect, it } from "vitest";
import { carriesAudio } from "./audio-parts.ts";

const chat = (content: unknown) => ({ messages: [{ role: "user", content }] });

describe("carriesAudio", () => {
  it("finds chat input_audio and audio data: URLs, Gemini audio inlineData and fileData", () => {
    expect(carriesAudio(chat([{ type: "input_audio", input_audio: { data: "UklGRg==", format: "wav" } }]))).toBe(true);
    expect(carriesAudio(chat([{ type: "image_url", image_url: { url: "data:audio/wav;base64,UklGRg==" } }]))).toBe(true);
    expect(carriesAudio(chat([{ type: "file", file: { file_data: "data:audio/mp3;base64,SUQz" } }]))).toBe(true);
    expect(carriesAudio({ input: [{ role: "user", content: [{ type: "input_file", file_data: "data:audio/wav;base64,UklGRg==" }] }] })).toBe(true);
    expect(carriesAudio({ contents: [{ parts: [{ inlineData: { mimeType: "Audio/L16;rate=16000", data: "AAAA" } }] }] })).toBe(true);
    expect(carriesAudio({ systemInstruction: { parts: [{ fileData: { mimeType: "audio/ogg", fileUri: "gs://b/a.ogg" } }] } })).toBe(true);
  });

  it("is false for other media, for text naming audio and for a tool call's arguments", () => {
    expect(carriesAudio(chat([{ type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } }]))).toBe(false);
    expect(carriesAudio(chat("data:audio/wav;base64,UklGRg=="))).toBe(false);
    expect(carriesAudio({ contents: [{ parts: [{ inlineData: { mimeType: "video/mp4", data: "AAAA" } }, { text: "audio/wav" }] }] })).toBe(false);
    expect(carriesAudio({ contents: [{ parts: [{ functionCall: { name: "f", args: { inlineData: { mimeType: "audio/wav" } } } }] }] })).toBe(false);
    expect(carriesAudio({ messages: [{ role: "assistant", content: [{ type: "tool_use", id: "t", name: "f", input: { type: "input_audio" } }] }] })).toBe(false);
    expect(carriesAudio(undefined)).toBe(false);
  });
});
