import { describe, expect, it } from "vitest";
import { onProviderState } from "./provider-state.ts";

describe("onProviderState", () => {
  it("a Messages request in a named container: the provider's files answer it, not only the body", () => {
    expect(onProviderState("messages", { container: "container_011CPR5CNjB747bTd36fQLFk" })).toBe(true);
    expect(onProviderState("messages", { container: { id: "container_011CPR5CNjB747bTd36fQLFk", skills: [] } })).toBe(true);
  });

  it("a Messages request without one, or asking only for skills, gets a fresh container", () => {
    expect(onProviderState("messages", {})).toBe(false);
    expect(onProviderState("messages", { container: { skills: [{ type: "anthropic", skill_id: "pptx" }] } })).toBe(false);
    expect(onProviderState("messages", { container: null })).toBe(false);
  });

  it("Responses: a conversation or a named container; other endpoints never", () => {
    expect(onProviderState("responses", { conversation: "conv_1" })).toBe(true);
    expect(onProviderState("responses", { tools: [{ type: "code_interpreter", container: "cntr_1" }] })).toBe(true);
    expect(onProviderState("chat", { container: "container_1" })).toBe(false);
  });
});
