import { describe, expect, it } from "vitest";
import { stringifyToolArguments } from "./tool-arguments.ts";

describe("stringifyToolArguments", () => {
  it("turns object arguments of tool calls and a legacy function_call into their JSON text", () => {
    const answer = { choices: [{ message: { tool_calls: [{ function: { name: "a", arguments: { x: 1 } } }, { function: { name: "b", arguments: "{}" } }], function_call: { name: "c", arguments: { y: [2] } } } }] };
    expect(stringifyToolArguments(answer, "message")).toBe(true);
    const m = answer.choices[0]!.message;
    expect(m.tool_calls.map((c) => c.function.arguments)).toEqual(['{"x":1}', "{}"]);
    expect(m.function_call.arguments).toBe('{"y":[2]}');
  });

  it("leaves string arguments (and streamed pieces of them) as they are", () => {
    const chunk = { choices: [{ delta: { tool_calls: [{ index: 0, function: { arguments: '{"x":' } }] } }] };
    expect(stringifyToolArguments(chunk, "delta")).toBe(false);
    expect(chunk.choices[0]!.delta.tool_calls[0]!.function.arguments).toBe('{"x":');
  });
});
