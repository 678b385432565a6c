import { describe, expect, it } from "vitest";
import { askedForStream } from "./asked-stream.ts";

type Ctx = Parameters<typeof askedForStream>[0];
const ctx = (c: Partial<Ctx>): Ctx => ({ endpoint: "chat", method: "POST", path: "/api/v1/chat/completions", params: {}, body: undefined, response: undefined, ...c }) as Ctx;

describe("askedForStream", () => {
  it("a body's stream: true, whether or not it was answered", () => {
    expect(askedForStream(ctx({ body: { stream: true, temperature: "x" } }))).toBe(true);
    expect(askedForStream(ctx({ body: { stream: false } }))).toBe(false);
    expect(askedForStream(ctx({ body: undefined }))).toBe(false);
  });

  it("a Gemini request by its URL's method, before its body is valid", () => {
    const gemini = (action: string) => ctx({ endpoint: "gemini", path: `/api/v1beta/models/t/m:${action}`, params: { model: "t/m", action }, body: { contents: [], generationConfig: { temperature: "x" } } });
    expect(askedForStream(gemini("streamGenerateContent"))).toBe(true);
    expect(askedForStream(gemini("generateContent"))).toBe(false);
    // The Gemini API has no body field for it: a refused :generateContent whose body says stream: true did not ask.
    const refused = ctx({ endpoint: "gemini", path: "/api/v1beta/models/t/m:generateContent", params: { model: "t/m", action: "generateContent" }, body: { stream: true, contents: "x" } });
    expect(askedForStream(refused)).toBe(false);
  });

  it("a stored Responses answer fetched with ?stream=true", () => {
    const get = (path: string) => ctx({ endpoint: "responses_state", method: "GET", path, params: { id: "resp_1" } });
    expect(askedForStream(get("/api/v1/responses/resp_1?stream=true&starting_after=2"))).toBe(true);
    expect(askedForStream(get("/api/v1/responses/resp_1"))).toBe(false);
    expect(askedForStream(ctx({ endpoint: "responses_state", method: "DELETE", path: "/api/v1/responses/resp_1?stream=true" }))).toBe(false);
  });
});
