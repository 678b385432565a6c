import { describe, expect, it } from "vitest";
import { Readable } from "node:stream";
import { readUpstreamJson, type UpstreamResponse } from "./http.ts";
import { errorEnvelope } from "./answer-check.ts";

/** A 200 answer with this body, as readUpstreamJson gets it from undici. */
function answer(text: string, contentType = "application/json"): UpstreamResponse {
  return { status: 200, headers: { "content-type": contentType }, body: Readable.from([Buffer.from(text)]) as unknown as UpstreamResponse["body"] };
}

const read = (text: string, contentType?: string) => readUpstreamJson("up", answer(text, contentType)).catch((e) => e);

describe("a provider's 2xx JSON answer", () => {
  it("an error envelope sent with 200 (OpenAI, Anthropic, Gemini) is a retryable 502 naming the provider and its message", async () => {
    const bodies = [
      { error: { message: "The server had an error while processing your request", type: "server_error", code: null } },
      { type: "error", error: { type: "overloaded_error", message: "Overloaded" } },
      { error: { code: 503, message: "The model is overloaded.", status: "UNAVAILABLE" } },
    ];
    for (const body of bodies) {
      const err = await read(JSON.stringify(body));
      expect(err).toMatchObject({ status: 502, code: "UPSTREAM_ERROR", retryable: true, details: { provider: "up", reason: "error_answer", upstream_error: { message: body.error.message } } });
      expect(err.message).toContain(`Provider up answered HTTP 200 with an error: ${body.error.message}`);
    }
  });

  it("answers that report a failure of their own (a job, a failed response, an operation) stay answers", async () => {
    const answers = [
      { id: "video_1", object: "video", status: "failed", error: { code: "moderation", message: "blocked" } },
      { id: "resp_1", object: "response", status: "failed", error: { code: "server_error", message: "x" }, output: [] },
      { name: "operations/1", done: true, error: { code: 3, message: "bad" } },
      { id: "chatcmpl-1", object: "chat.completion", choices: [], error: null },
    ];
    for (const a of answers) expect(await read(JSON.stringify(a))).toEqual(a);
    expect(errorEnvelope([{ error: { message: "x" } }])).toBeUndefined();
  });

  it("an answer nested deeper than requests may be (100 000 levels) is a retryable 502, not a crash later", async () => {
    const deep = "[".repeat(100_000) + "]".repeat(100_000);
    const err = await read(`{"id":"x","choices":${deep}}`);
    expect(err).toMatchObject({ status: 502, code: "UPSTREAM_ERROR", retryable: true, details: { provider: "up", reason: "answer_too_deep" } });
    expect(err.message).toContain("nested deeper than 128 levels");
  });

  it("a JSON answer that starts with a UTF-8 BOM is the answer (it was a 502 'not valid JSON')", async () => {
    const a = { id: "msg_1", type: "message", content: [{ type: "text", text: "Hé" }] };
    expect(await read(`\uFEFF${JSON.stringify(a)}`)).toEqual(a);
  });

  it("a body that is not JSON (an HTML page, an SSE stream) says so, not that the provider could not be reached", async () => {
    for (const [text, type] of [["<html>Bad gateway</html>", "text/html"], ["data: {}\n\n", "text/event-stream"]]) {
      const err = await read(text!, type);
      expect(err).toMatchObject({ status: 502, code: "UPSTREAM_ERROR", retryable: true, details: { provider: "up", reason: "invalid_answer" } });
      expect(err.message).toBe(`Provider up's answer (HTTP 200, ${type}) was not valid JSON`);
    }
  });
});
