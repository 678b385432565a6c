import { describe, expect, it } from "vitest";
import type { Target } from "../../../core/contracts/provider.ts";
import { GatewayError } from "../../../core/errors.ts";
import { messagesAsGeminiRequest } from "./count-request.ts";

const target: Target = { modelId: "google/gemini-2.5-flash", provider: "gem", upstreamModel: "gemini-2.5-flash", pricing: {} };

describe("messagesAsGeminiRequest: a count_tokens body as Gemini's request", () => {
  it("carries the system prompt and tools as a generation would", () => {
    const g = messagesAsGeminiRequest({
      model: "m", system: "Be brief.", messages: [{ role: "user", content: "Hi" }],
      tools: [{ name: "get_time", input_schema: { type: "object", properties: {} } }],
    }, target);
    expect(g.systemInstruction).toEqual({ parts: [{ text: "Be brief." }] });
    expect((g.tools as any)[0].functionDeclarations[0].name).toBe("get_time");
  });

  it("a refusal names the field the Messages client sent, not chat's", () => {
    const err = (() => {
      try {
        // A tool result answering no earlier tool call: Gemini names a function response by its call's name.
        messagesAsGeminiRequest({
          model: "m",
          messages: [
            { role: "user", content: "Hi" },
            { role: "assistant", content: "Hello." },
            { role: "user", content: [{ type: "text", text: "see:" }, { type: "tool_result", tool_use_id: "toolu_nope", content: "42" }] },
          ],
        }, target);
      } catch (e) {
        return e;
      }
    })() as GatewayError;
    expect(err).toBeInstanceOf(GatewayError);
    expect(err.status).toBe(400);
    expect(err.details?.field).toBe("messages[2].content[1].tool_use_id");
    expect(err.message).toMatch(/^messages\[2\]\.content\[1\]\.tool_use_id/);
  });
});
