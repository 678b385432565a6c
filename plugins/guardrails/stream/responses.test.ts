// A Responses stream through an output rule's window that fails midway: the held text goes out before the failure
// is told (the upstream's `error` event, or response.failed), and every event the client gets, the gateway's own
// `error` event last, is numbered on from the one before.
import { describe, expect, it } from "vitest";
import type { SseEvent } from "../../../core/sse/parse.ts";
import { GatewayError } from "../../../core/errors.ts";
import { streamErrorEvent } from "../../../core/http/respond.ts";
import { SseParser } from "../../../core/sse/parse.ts";
import { runFor } from "../testkit.ts";
import { guardStream } from "./index.ts";

const RULES = { rules: [{ name: "nokw", type: "deny" as const, on: ["output" as const], keywords: ["FORBIDDENWORD"], action: "block" as const }] };
/** Where the chat-to-Responses translator and the native relay leave the number the gateway's `error` event takes. */
const NEXT_SEQUENCE = Symbol.for("model-gateway.responses.next-sequence");
const AT = { item_id: "msg_1", output_index: 0, content_index: 0 };

function numbered() {
  let seq = 0;
  return (type: string, data: object = {}): SseEvent => ({ event: type, data: JSON.stringify({ type, sequence_number: seq++, ...data }) });
}

/** The opening events and two deltas, numbered from 0 (the deltas 4 and 5). */
function opening(ev: ReturnType<typeof numbered>): SseEvent[] {
  return [
    ev("response.created", { response: { id: "r1", status: "in_progress", output: [] } }),
    ev("response.in_progress", { response: { id: "r1", status: "in_progress", output: [] } }),
    ev("response.output_item.added", { output_index: 0, item: { id: "msg_1", type: "message", role: "assistant", content: [] } }),
    ev("response.content_part.added", { ...AT, part: { type: "output_text", text: "", annotations: [] } }),
    ev("response.output_text.delta", { ...AT, delta: "Hello" }),
    ev("response.output_text.delta", { ...AT, delta: " there" }),
  ];
}

/** The events through the guard with the keyword rule, then what the gateway writes for the error it ends with. */
async function client(events: SseEvent[], err?: GatewayError): Promise<any[]> {
  const run = runFor(RULES, "responses");
  const upstream = (async function* () {
    yield* events;
    if (err) throw err;
  })();
  let text = "";
  try {
    for await (const ev of guardStream(run.ctx, run, upstream)) text += `event: ${ev.event}\ndata: ${ev.data}\n\n`;
  } catch (e) {
    text += streamErrorEvent(run.ctx, e as GatewayError);
  }
  return new SseParser().push(text).map((e) => JSON.parse(e.data));
}

const deltas = (evs: any[]) => evs.filter((e) => e.type === "response.output_text.delta").map((e) => e.delta).join("");
const numbers = (evs: any[]) => evs.map((e) => e.sequence_number);

describe("a translated Responses stream whose upstream fails, with an output rule", () => {
  it("the gateway's error event is numbered after response.failed, which came after the held text", async () => {
    const ev = numbered();
    const events = [...opening(ev), ev("response.failed", { response: { id: "r1", status: "failed", error: { code: "server_error", message: "reset" }, output: [] } })];
    // The translator numbered the stream to 6: its error event would take 7.
    const err = new GatewayError(502, "UPSTREAM_ERROR", "Could not reach provider up: other side closed");
    (err as any)[NEXT_SEQUENCE] = 7;
    const got = await client(events, err);
    expect(got.map((e) => e.type).slice(-3)).toEqual(["response.output_text.delta", "response.failed", "error"]);
    expect(deltas(got)).toBe("Hello there");
    expect(numbers(got)).toEqual(got.map((_, i) => i));
  });
});

describe("a native Responses stream whose upstream sends its error event, with an output rule", () => {
  it("the held text goes out before the upstream's error event, numbered on", async () => {
    const ev = numbered();
    const events = [
      ...opening(ev),
      ev("error", { code: "server_error", message: "The server had an error", param: null }),
      ev("response.failed", { response: { id: "r1", status: "failed", error: { code: "server_error", message: "The server had an error" }, output: [] } }),
    ];
    const got = await client(events);
    const types = got.map((e) => e.type);
    expect(types.slice(-3)).toEqual(["response.output_text.delta", "error", "response.failed"]);
    // What a client reading up to the error event (the openai SDK stops there) has.
    expect(deltas(got.slice(0, types.indexOf("error")))).toBe("Hello there");
    expect(numbers(got)).toEqual(got.map((_, i) => i));
  });
});
