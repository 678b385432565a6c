import { describe, expect, it } from "vitest";
import { breakpointError, countMarkers, markTranslated, placeAutoMarkers, stripChatCacheMarkers } from "./markers.ts";
import { Unsupported } from "../contracts/translator.ts";

const E = { type: "ephemeral" };

describe("automatic cache markers", () => {
  it("marks the last tool, the system prompt, the end of the stable prefix and the newest turn", () => {
    const body: any = {
      tools: [{ name: "a" }, { name: "b" }],
      system: "You are helpful.",
      messages: [
        { role: "user", content: "Q1" },
        { role: "assistant", content: [{ type: "thinking", thinking: "t" }, { type: "text", text: "A1" }] },
        { role: "user", content: "Q2" },
      ],
    };
    expect(placeAutoMarkers(body)).toBe(4);
    expect(body.tools[1].cache_control).toEqual(E);
    expect(body.tools[0].cache_control).toBeUndefined();
    expect(body.system).toEqual([{ type: "text", text: "You are helpful.", cache_control: E }]);
    expect(body.messages[1].content[1].cache_control).toEqual(E);
    expect(body.messages[1].content[0].cache_control).toBeUndefined(); // thinking blocks cannot carry markers
    expect(body.messages[2].content).toEqual([{ type: "text", text: "Q2", cache_control: E }]);
  });

  it("never more than four in all, counting the client's own markers", () => {
    const body: any = {
      tools: [{ name: "a", cache_control: E }],
      system: [{ type: "text", text: "s", cache_control: E }],
      messages: [{ role: "user", content: [{ type: "text", text: "x", cache_control: E }] }, { role: "assistant", content: "y" }, { role: "user", content: "z" }],
    };
    expect(placeAutoMarkers(body)).toBe(1);
    expect(countMarkers(body)).toBe(4);
  });

  it("counts the markers inside a tool result and a top-level cache_control toward the four", () => {
    const body: any = {
      cache_control: E,
      tools: [{ name: "a" }],
      system: "s",
      messages: [
        { role: "user", content: "q" },
        { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "a", input: {} }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: [{ type: "text", text: "r", cache_control: E }] }] },
      ],
    };
    expect(countMarkers(body)).toBe(2);
    expect(placeAutoMarkers(body)).toBe(2);
    expect(countMarkers(body)).toBe(4);
    expect(body.messages[2].content[0].cache_control).toBeUndefined(); // the top-level breakpoint is the newest turn's
  });

  it("a top-level 1h cache_control makes every placed marker 1h (it sits after all of them)", () => {
    const body: any = { cache_control: { type: "ephemeral", ttl: "1h" }, system: "s", messages: [{ role: "user", content: "q" }] };
    placeAutoMarkers(body);
    expect(body.system[0].cache_control).toEqual({ type: "ephemeral", ttl: "1h" });
  });

  it("more than four is a 400 naming cache_control; on a translated body a target that drops markers may serve it", () => {
    const five: any = { messages: [{ role: "user", content: [1, 2, 3, 4, 5].map((i) => ({ type: "text", text: `${i}`, cache_control: E })) }] };
    expect(breakpointError(five)?.details).toMatchObject({ field: "cache_control" });
    expect(breakpointError({ ...five, messages: [{ role: "user", content: five.messages[0].content.slice(1) }] })).toBeUndefined();
    expect(() => markTranslated(five, false)).toThrow(Unsupported);
  });

  it("a marker placed before an existing 1h marker becomes 1h (1h breakpoints precede 5m ones)", () => {
    const body: any = { tools: [{ name: "a" }], messages: [{ role: "user", content: [{ type: "text", text: "x", cache_control: { type: "ephemeral", ttl: "1h" } }] }] };
    placeAutoMarkers(body);
    expect(body.tools[0].cache_control).toEqual({ type: "ephemeral", ttl: "1h" });
  });

  it("strips markers from chat bodies for upstreams that do not understand them", () => {
    const body = { model: "m", tools: [{ type: "function", function: { name: "f" }, cache_control: E }], messages: [{ role: "user", content: [{ type: "text", text: "x", cache_control: E }] }] };
    const out = stripChatCacheMarkers(body);
    expect(JSON.stringify(out)).not.toContain("cache_control");
    expect(JSON.stringify(body)).toContain("cache_control"); // the original is untouched
  });
});
