import { describe, expect, it } from "vitest";
import { responsesToChatRequest } from "./request.ts";

describe("responses request -> chat", () => {
  it("instructions, items, tools, format and knobs map; what chat cannot carry is reported", () => {
    const { body, dropped } = responsesToChatRequest({
      model: "m", instructions: "Be brief.", max_output_tokens: 50, temperature: 0.2, stream: true, store: true, metadata: { a: "b" },
      reasoning: { effort: "low", summary: "auto" }, tool_choice: { type: "function", name: "f" }, parallel_tool_calls: false, unknown_field: 1,
      tools: [{ type: "function", name: "f", parameters: { type: "object" }, strict: true }],
      text: { format: { type: "json_schema", name: "s", schema: { type: "object" }, strict: true } },
      input: [
        { role: "developer", content: "dev" },
        { role: "user", content: [{ type: "input_text", text: "look" }, { type: "input_image", image_url: "https://x/y.png", detail: "low" }] },
        { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "hm" }] },
        { type: "message", role: "assistant", content: [{ type: "output_text", text: "calling" }] },
        { type: "function_call", call_id: "c1", name: "f", arguments: "{}" },
        { type: "function_call", call_id: "c2", name: "f", arguments: "{\"x\":1}" },
        { type: "function_call_output", call_id: "c1", output: "one" },
        { type: "function_call_output", call_id: "c2", output: "two" },
      ],
    });
    expect(body).toEqual({
      model: "m", max_completion_tokens: 50, temperature: 0.2, parallel_tool_calls: false, reasoning_effort: "low",
      stream: true, stream_options: { include_usage: true },
      tools: [{ type: "function", function: { name: "f", parameters: { type: "object" }, strict: true } }],
      tool_choice: { type: "function", function: { name: "f" } },
      response_format: { type: "json_schema", json_schema: { name: "s", schema: { type: "object" }, strict: true } },
      messages: [
        { role: "system", content: "Be brief." },
        { role: "system", content: "dev" },
        { role: "user", content: [{ type: "text", text: "look" }, { type: "image_url", image_url: { url: "https://x/y.png", detail: "low" } }] },
        { role: "assistant", content: "calling" },
        { role: "assistant", content: null, tool_calls: [
          { id: "c1", type: "function", function: { name: "f", arguments: "{}" } },
          { id: "c2", type: "function", function: { name: "f", arguments: "{\"x\":1}" } },
        ] },
        { role: "tool", tool_call_id: "c1", content: "one" },
        { role: "tool", tool_call_id: "c2", content: "two" },
      ],
    });
    expect(dropped).toEqual(["reasoning.summary", "metadata"]);
  });

  it("a string input is one user message", () => {
    expect(responsesToChatRequest({ model: "m", input: "Hi" }).body).toEqual({ model: "m", messages: [{ role: "user", content: "Hi" }] });
  });
});
