import { describe, expect, it } from "vitest";
import { chatToolIdsFor, responsesCallIdsFor } from "./tool-call-ids.ts";

/** An assistant turn calling each id and a tool message answering each. */
const history = (...ids: string[]) => [
  { role: "user", content: "go" },
  { role: "assistant", content: null, tool_calls: ids.map((id) => ({ id, type: "function", function: { name: "f", arguments: "{}" } })) },
  ...ids.map((id) => ({ role: "tool", tool_call_id: id, content: "ok" })),
];
const callIds = (ms: any) => ms[1].tool_calls.map((c: any) => c.id);
const resultIds = (ms: any) => ms.slice(2).map((m: any) => m.tool_call_id);

describe("tool-call ids for Mistral (only 9 letters or digits)", () => {
  it("another provider's ids become 9 letters or digits, each call's result the same as its call, distinct ids distinct", () => {
    const out = chatToolIdsFor(history("toolu_01A09q90qw90lq917835lq9", "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q", "call_x.1:weird"), "mistral");
    expect(callIds(out).every((id: string) => /^[a-zA-Z0-9]{9}$/.test(id))).toBe(true);
    expect(resultIds(out)).toEqual(callIds(out));
    expect(new Set(callIds(out)).size).toBe(3);
  });

  it("the same id is sent the same way in every request (a replayed history pairs as before)", () => {
    expect(callIds(chatToolIdsFor(history("toolu_01A09q90qw90lq917835lq9"), "mistral"))).toEqual(callIds(chatToolIdsFor(history("call_9", "toolu_01A09q90qw90lq917835lq9"), "mistral")).slice(1));
  });

  it("Mistral's own ids go as sent, and no rewritten id takes one of them", () => {
    const theirs = "D681PevKs";
    const out = chatToolIdsFor(history(theirs, "toolu_x"), "mistral");
    expect(callIds(out)[0]).toBe(theirs);
    expect(callIds(out)[1]).not.toBe(theirs);
    const mine = callIds(chatToolIdsFor(history("toolu_x"), "mistral"))[0];
    // An id the client already sends that equals what toolu_x would become: toolu_x is given another.
    const taken = chatToolIdsFor(history(mine, "toolu_x"), "mistral");
    expect(callIds(taken)[0]).toBe(mine);
    expect(callIds(taken)[1]).toMatch(/^[a-zA-Z0-9]{9}$/);
    expect(callIds(taken)[1]).not.toBe(mine);
    expect(resultIds(taken)).toEqual(callIds(taken));
  });

  it("a history whose ids all fit is the same array", () => {
    const ms = history("abcDEF123");
    expect(chatToolIdsFor(ms, "mistral")).toBe(ms);
    expect(chatToolIdsFor(ms, "passthrough")).toBe(ms);
  });
});

describe("tool-call ids for OpenAI (chat ids up to 40 characters, Responses call_ids up to 64)", () => {
  const long = `functions.mcp__github__create_pull_request_review_comment:0`;
  it("a chat id over 40 characters is cut to 40 before a hash, the same in call and result; shorter ones as sent", () => {
    const out = chatToolIdsFor(history(long, `${long}1`, "call_abc"), "openai");
    expect(callIds(out).slice(0, 2).every((id: string) => id.length === 40)).toBe(true);
    expect(callIds(out)[0]).not.toBe(callIds(out)[1]);
    expect(callIds(out)[2]).toBe("call_abc");
    expect(resultIds(out)).toEqual(callIds(out));
  });

  it("a Responses call_id over 64 is cut to 64 in the call and its output; 41 to 64 go as sent", () => {
    const veryLong = `${long}_${"x".repeat(20)}`;
    const input = [
      { type: "function_call", call_id: veryLong, name: "f", arguments: "{}" },
      { type: "function_call_output", call_id: veryLong, output: "ok" },
      { type: "function_call", call_id: long, name: "f", arguments: "{}" },
    ];
    const out = responsesCallIdsFor(input, "openai") as any[];
    expect(out[0].call_id).toHaveLength(64);
    expect(out[1].call_id).toBe(out[0].call_id);
    expect(out[2].call_id).toBe(long);
    expect(responsesCallIdsFor(input, "passthrough")).toBe(input);
  });
});
