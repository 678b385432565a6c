import { describe, expect, it } from "vitest";
import { vertexClaudeBody, VERTEX_ANTHROPIC_VERSION } from "./claude.ts";
import { maxInstances } from "./embeddings.ts";

const target = { modelId: "anthropic/claude-sonnet-4.5", provider: "vertex", upstreamModel: "claude-sonnet-4-5@20250929", pricing: { output: "0.000015" } };

describe("Claude on Vertex body", () => {
  it("drops model and the gateway's own fields, adds anthropic_version, keeps stream and the rest", () => {
    const body = { model: "anthropic/claude-sonnet-4.5", max_tokens: 10, stream: true, messages: [{ role: "user", content: "Hi" }], providerOptions: { gateway: { order: ["vertex"] } } };
    expect(vertexClaudeBody(body, target, "vertex")).toEqual({ anthropic_version: VERTEX_ANTHROPIC_VERSION, max_tokens: 10, stream: true, messages: body.messages });
  });

  it("a message thread (the SDK tool runner's default) is the 400 naming thread that the SDK's threads go on unthreaded after", () => {
    const body = { max_tokens: 10, messages: [{ role: "user", content: "x" }], thread: { type: "continue", previous_message_id: "msg_1" } };
    expect(() => vertexClaudeBody(body, target, "vertex"))
      .toThrow(expect.objectContaining({ status: 400, details: expect.objectContaining({ field: "thread", error_code: "thread_unsupported_request" }) }));
    expect(vertexClaudeBody({ ...body, thread: null }, target, "vertex")).not.toHaveProperty("thread");
  });

  it("a dollar thinking budget becomes Anthropic's thinking block, as on the first-party API", () => {
    const out = vertexClaudeBody({ max_tokens: 100, messages: [], providerOptions: { vertex: { thinkingBudget: 0.03 } } }, target, "vertex");
    expect(out.thinking).toEqual({ type: "enabled", budget_tokens: 2000 });
    expect(out.max_tokens).toBe(2100);
  });

  it("embedding batch sizes: one instance for gemini-embedding, 250 for text-embedding", () => {
    expect(maxInstances("gemini-embedding-001")).toBe(1);
    expect(maxInstances("text-embedding-005")).toBe(250);
  });
});
