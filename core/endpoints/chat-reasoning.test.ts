import { describe, expect, it } from "vitest";
import { foldReasoning } from "./chat-reasoning.ts";

const fold = (body: Record<string, unknown>) => {
  foldReasoning(body);
  return body;
};

describe("OpenRouter's reasoning object on chat", () => {
  it("effort becomes reasoning_effort and the object goes (Qwen Code's reasoning setting)", () => {
    expect(fold({ model: "m", reasoning: { effort: "medium" } })).toEqual({ model: "m", reasoning_effort: "medium" });
  });

  it("max_tokens is rounded up to the effort whose budget covers it; 0 is off", () => {
    expect(fold({ reasoning: { max_tokens: 3000 } })).toEqual({ reasoning_effort: "high" });
    expect(fold({ reasoning: { max_tokens: 1024 } })).toEqual({ reasoning_effort: "low" });
    expect(fold({ reasoning: { max_tokens: 0 } })).toEqual({ reasoning_effort: "none" });
  });

  it("enabled alone is medium, enabled false is off", () => {
    expect(fold({ reasoning: { enabled: true } })).toEqual({ reasoning_effort: "medium" });
    expect(fold({ reasoning: { enabled: false, effort: "high" } })).toEqual({ reasoning_effort: "none" });
  });

  it("reasoning_effort sent beside it wins; exclude alone asks nothing", () => {
    expect(fold({ reasoning_effort: "low", reasoning: { effort: "high" } })).toEqual({ reasoning_effort: "low" });
    expect(fold({ reasoning: { exclude: true } })).toEqual({});
    expect(fold({ messages: [] })).toEqual({ messages: [] });
  });
});
