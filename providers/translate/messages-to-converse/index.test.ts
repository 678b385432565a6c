import { describe, expect, it } from "vitest";
import type { Target } from "../../../core/contracts/provider.ts";
import type { SseEvent } from "../../../core/sse/parse.ts";
import { messagesToConverse } from "./index.ts";
import { chatToConverse } from "../chat-to-converse/index.ts";

const nova: Target = { modelId: "amazon/nova-pro", provider: "bedrock", upstreamModel: "us.amazon.nova-pro-v1:0", pricing: {} };
const opts = { cacheMarkers: true, cacheAuto: false, driverProtocol: "bedrock", provider: "bedrock" };
const call = { reportUsage: () => {}, inputEstimate: 9 } as any;

/** A Messages client's request with a stop sequence, translated: the chain's state for its answer. */
const stateFor = (stream: boolean) =>
  messagesToConverse.request({ model: "amazon/nova-pro", max_tokens: 100, stream, stop_sequences: ["END"], messages: [{ role: "user", content: "Count to 3 then say END" }] }, nova, opts).state;

const converseJson = (stopReason: string, extra: Record<string, unknown> = {}) => ({
  output: { message: { role: "assistant", content: [{ text: "1 2 3 " }] } }, stopReason,
  usage: { inputTokens: 12, outputTokens: 6, totalTokens: 18 }, metrics: { latencyMs: 1 }, ...extra,
});

const ev = (event: string, payload: unknown): SseEvent => ({ event, data: JSON.stringify(payload) });
const converseEvents = (messageStop: Record<string, unknown>) => [
  ev("messageStart", { role: "assistant" }),
  ev("contentBlockDelta", { contentBlockIndex: 0, delta: { text: "1 2 3 " } }),
  ev("contentBlockStop", { contentBlockIndex: 0 }),
  ev("messageStop", messageStop),
  ev("metadata", { usage: { inputTokens: 12, outputTokens: 6, totalTokens: 18 }, metrics: { latencyMs: 1 } }),
];
async function* from(events: SseEvent[]) { yield* events; }
async function messagesEvents(events: SseEvent[]): Promise<any[]> {
  const out: any[] = [];
  for await (const e of messagesToConverse.stream(from(events), stateFor(true), call)) out.push(JSON.parse(e.data));
  return out;
}

describe("Messages client on a Converse upstream: how the answer stopped", () => {
  it("JSON: Converse's stop_sequence with the sequence it names is stop_reason stop_sequence, stop_sequence END", () => {
    const msg: any = messagesToConverse.response(converseJson("stop_sequence", { additionalModelResponseFields: { stop_sequence: "END" } }), stateFor(false), call);
    expect(msg).toMatchObject({ stop_reason: "stop_sequence", stop_sequence: "END", content: [{ type: "text", text: "1 2 3 " }] });
  });

  it("JSON: a stop_sequence whose sequence Converse does not name is still stop_sequence (stop_sequence null)", () => {
    const msg: any = messagesToConverse.response(converseJson("stop_sequence"), stateFor(false), call);
    expect(msg).toMatchObject({ stop_reason: "stop_sequence", stop_sequence: null });
  });

  it("JSON: model_context_window_exceeded stays itself, not max_tokens; end_turn and max_tokens as they were", () => {
    expect(messagesToConverse.response(converseJson("model_context_window_exceeded"), stateFor(false), call)).toMatchObject({ stop_reason: "model_context_window_exceeded", stop_sequence: null });
    expect(messagesToConverse.response(converseJson("max_tokens"), stateFor(false), call)).toMatchObject({ stop_reason: "max_tokens", stop_sequence: null });
    expect(messagesToConverse.response(converseJson("end_turn"), stateFor(false), call)).toMatchObject({ stop_reason: "end_turn", stop_sequence: null });
  });

  it("stream: message_delta says stop_sequence END, as messageStop's additionalModelResponseFields names it", async () => {
    const out = await messagesEvents(converseEvents({ stopReason: "stop_sequence", additionalModelResponseFields: { delta: { stop_sequence: "END" } } }));
    expect(out.find((e) => e.type === "message_delta").delta).toEqual({ stop_reason: "stop_sequence", stop_sequence: "END" });
  });

  it("stream: model_context_window_exceeded stays itself; end_turn as it was", async () => {
    expect((await messagesEvents(converseEvents({ stopReason: "model_context_window_exceeded" }))).find((e) => e.type === "message_delta").delta)
      .toEqual({ stop_reason: "model_context_window_exceeded", stop_sequence: null });
    expect((await messagesEvents(converseEvents({ stopReason: "end_turn" }))).find((e) => e.type === "message_delta").delta)
      .toEqual({ stop_reason: "end_turn", stop_sequence: null });
  });

  it("a chat client on the same upstream still gets chat: finish_reason stop, nothing added to what it is sent", async () => {
    const chatState = chatToConverse.request({ model: "m", stop: ["END"], messages: [{ role: "user", content: "x" }] }, nova, opts).state;
    const chat: any = chatToConverse.response(converseJson("stop_sequence", { additionalModelResponseFields: { stop_sequence: "END" } }), chatState, call);
    expect(chat.choices[0].finish_reason).toBe("stop");
    expect(JSON.stringify(chat)).not.toContain("END");
  });
});
