// A stored response replayed as events: every event is one the Responses stream schema describes, and the openai
// SDK's own accumulator, fed them, builds the stored response back, whatever its items (reasoning summary and text,
// a message with annotations and a refusal, a function call, a custom tool call, a built-in tool's item).
import { describe, expect, it } from "vitest";
import { accumulateResponse } from "openai/lib/responses/ResponseAccumulator";
import { replayEvents } from "./replay-events.ts";
import { validateResponseStreamEvent } from "../generated/validators.js";

const stored = {
  id: "resp_1", object: "response", created_at: 1, model: "openai/gpt-4o", status: "incomplete", incomplete_details: { reason: "max_output_tokens" },
  error: null, usage: { input_tokens: 5, output_tokens: 9, total_tokens: 14, input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 }, output_tokens_details: { reasoning_tokens: 3 } },
  output: [
    { id: "rs_1", type: "reasoning", summary: [{ type: "summary_text", text: "Thinking." }], content: [{ type: "reasoning_text", text: "Hmm." }], encrypted_content: "mgr1.x" },
    { id: "ws_1", type: "web_search_call", status: "completed", action: { type: "search", query: "q" } },
    { id: "msg_1", type: "message", role: "assistant", status: "completed", content: [
      { type: "output_text", text: "See here.", annotations: [{ type: "url_citation", url: "https://x.test", title: "X", start_index: 0, end_index: 3 }], logprobs: [] },
      { type: "refusal", refusal: "Not that." },
    ] },
    { id: "fc_1", type: "function_call", call_id: "call_1", name: "get_weather", arguments: "{\"city\":\"Paris\"}", status: "completed" },
    { id: "ctc_1", type: "custom_tool_call", call_id: "call_2", name: "patch", input: "*** Begin" },
  ],
};

describe("replayEvents", () => {
  it("numbers valid events from 0, opens with created and in_progress, ends with the status's terminal event", () => {
    const events = [...replayEvents(stored)].map((e) => ({ event: e.event, data: JSON.parse(e.data) }));
    events.forEach((e, i) => {
      expect(e.data.sequence_number).toBe(i);
      expect(e.event).toBe(e.data.type);
      expect(validateResponseStreamEvent(e.data), `${e.event}: ${JSON.stringify(validateResponseStreamEvent.errors)}`).toBe(true);
    });
    expect(events.slice(0, 2).map((e) => e.event)).toEqual(["response.created", "response.in_progress"]);
    expect(events[0]!.data.response).toMatchObject({ id: "resp_1", status: "in_progress", output: [], usage: null });
    expect(events.at(-1)).toEqual({ event: "response.incomplete", data: { type: "response.incomplete", sequence_number: events.length - 1, response: stored } });
    // starting_after: the same numbering, the events after it only.
    expect([...replayEvents(stored, 4)].map((e) => JSON.parse(e.data))).toEqual(events.slice(5).map((e) => e.data));
  });

  it("the openai SDK's accumulator builds the stored output from the events before the terminal one", () => {
    let snapshot: any;
    const events = [...replayEvents(stored)].map((e) => JSON.parse(e.data));
    for (const e of events.slice(0, -1)) snapshot = accumulateResponse(e, snapshot);
    expect(snapshot.output).toEqual(stored.output);
    expect(snapshot.output_text).toBe("See here.");
  });
});
