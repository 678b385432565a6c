import { describe, expect, it } from "vitest";
import type { Target } from "../../../core/contracts/provider.ts";
import type { SseEvent } from "../../../core/sse/parse.ts";
import { messagesToConverse } from "./index.ts";
import { chatToConverse } from "../chat-to-converse/index.ts";

const nova: Target = { modelId: "amazon/nova-pro", provider: "bedrock", upstreamModel: "us.amazon.nova-pro-v1:0", pricing: {} };
/** Claude through Converse (bedrock_claude_api: converse): the family asked which stop sequence matched. */
const claude: Target = { modelId: "anthropic/claude-sonnet-4.6", provider: "bedrock", upstreamModel: "global.anthropic.claude-sonnet-4-6", pricing: {} };
const opts = { cacheMarkers: true, cacheAuto: false, driverProtocol: "bedrock", provider: "bedrock" };
const call = { reportUsage: () => {}, inputEstimate: 9 } as any;

/** A Messages client's request with stop sequences (END alone unless told), translated. */
const translated = (stream: boolean, stop_sequences = ["END"], target = nova) =>
  messagesToConverse.request({ model: target.modelId, max_tokens: 100, stream, stop_sequences, messages: [{ role: "user", content: "Count to 3 then say END" }] }, target, opts);
/** The chain's state for its answer. */
const stateFor = (stream: boolean, stop_sequences?: string[], target = nova) => translated(stream, stop_sequences, target).state;

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
async function messagesEvents(events: SseEvent[], stop_sequences?: string[], target = nova): Promise<any[]> {
  const out: any[] = [];
  for await (const e of messagesToConverse.stream(from(events), stateFor(true, stop_sequences, target), call)) out.push(JSON.parse(e.data));
  return out;
}

describe("Messages client on a Converse upstream: how the answer stopped", () => {
  it("JSON: Converse's stop_sequence with the sequence it names is stop_reason stop_sequence, stop_sequence END", () => {
    const msg: any = messagesToConverse.response(converseJson("stop_sequence", { additionalModelResponseFields: { stop_sequence: "END" } }), stateFor(false, ["END", "STOP"], claude), call);
    expect(msg).toMatchObject({ stop_reason: "stop_sequence", stop_sequence: "END", content: [{ type: "text", text: "1 2 3 " }] });
  });

  // Converse names the sequence only when asked (additionalModelResponseFieldPaths), and only Claude is asked.
  it("JSON: a stop_sequence Converse does not name is the one the client sent, when it sent one", () => {
    const msg: any = messagesToConverse.response(converseJson("stop_sequence"), stateFor(false), call);
    expect(msg).toMatchObject({ stop_reason: "stop_sequence", stop_sequence: "END" });
  });

  it("JSON: of several the client sent, one Converse does not name is end_turn with null (never stop_sequence with null)", () => {
    const msg: any = messagesToConverse.response(converseJson("stop_sequence"), stateFor(false, ["END", "STOP"]), call);
    expect(msg).toMatchObject({ stop_reason: "end_turn", stop_sequence: null });
  });

  it("stream: the same, the one sent named; of several, end_turn with null", async () => {
    expect((await messagesEvents(converseEvents({ stopReason: "stop_sequence" }))).find((e) => e.type === "message_delta").delta)
      .toEqual({ stop_reason: "stop_sequence", stop_sequence: "END" });
    expect((await messagesEvents(converseEvents({ stopReason: "stop_sequence" }), ["END", "STOP"])).find((e) => e.type === "message_delta").delta)
      .toEqual({ stop_reason: "end_turn", stop_sequence: null });
  });

  it("stream: a sequence Converse names wins over guessing, of several sent", async () => {
    const out = await messagesEvents(converseEvents({ stopReason: "stop_sequence", additionalModelResponseFields: { delta: { stop_sequence: "STOP" } } }), ["END", "STOP"], claude);
    expect(out.find((e) => e.type === "message_delta").delta).toEqual({ stop_reason: "stop_sequence", stop_sequence: "STOP" });
  });

  it("request: Claude on Converse is asked for the matched sequence (JSON's and a stream's path); Nova, or no stop sequences, is not", () => {
    for (const stream of [false, true]) {
      expect((translated(stream, ["END", "STOP"], claude).body as any).additionalModelResponseFieldPaths).toEqual(["/stop_sequence", "/delta/stop_sequence"]);
      expect(translated(stream, ["END", "STOP"]).body).not.toHaveProperty("additionalModelResponseFieldPaths");
      expect(translated(stream, [], claude).body).not.toHaveProperty("additionalModelResponseFieldPaths");
    }
  });

  it("JSON: model_context_window_exceeded stays itself, not max_tokens; end_turn and max_tokens as they were", () => {
    expect(messagesToConverse.response(converseJson("model_context_window_exceeded"), stateFor(false), call)).toMatchObject({ stop_reason: "model_context_window_exceeded", stop_sequence: null });
    expect(messagesToConverse.response(converseJson("max_tokens"), stateFor(false), call)).toMatchObject({ stop_reason: "max_tokens", stop_sequence: null });
    expect(messagesToConverse.response(converseJson("end_turn"), stateFor(false), call)).toMatchObject({ stop_reason: "end_turn", stop_sequence: null });
  });

  it("stream: message_delta says stop_sequence END, as messageStop's additionalModelResponseFields names it", async () => {
    const out = await messagesEvents(converseEvents({ stopReason: "stop_sequence", additionalModelResponseFields: { delta: { stop_sequence: "END" } } }), ["END", "STOP"], claude);
    expect(out.find((e) => e.type === "message_delta").delta).toEqual({ stop_reason: "stop_sequence", stop_sequence: "END" });
  });

  it("stream: model_context_window_exceeded stays itself; end_turn as it was", async () => {
    expect((await messagesEvents(converseEvents({ stopReason: "model_context_window_exceeded" }))).find((e) => e.type === "message_delta").delta)
      .toEqual({ stop_reason: "model_context_window_exceeded", stop_sequence: null });
    expect((await messagesEvents(converseEvents({ stopReason: "end_turn" }))).find((e) => e.type === "message_delta").delta)
      .toEqual({ stop_reason: "end_turn", stop_sequence: null });
  });

  it("a chat client on the same upstream still gets chat: finish_reason stop, nothing added to what it is sent", async () => {
    const chatState = chatToConverse.request({ model: "m", stop: ["END"], messages: [{ role: "user", content: "x" }] }, claude, opts).state;
    const chat: any = chatToConverse.response(converseJson("stop_sequence", { additionalModelResponseFields: { stop_sequence: "END" } }), chatState, call);
    expect(chat.choices[0].finish_reason).toBe("stop");
    expect(JSON.stringify(chat)).not.toContain("END");
  });
});
