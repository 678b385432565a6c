// A streamed answer through the guardrails: each event handed to its protocol's adapter (output rules over a window,
// placeholders restored across chunk boundaries), the slots flushed before the event that ends the answer, then the
// answer-level verdicts (allow rules, moderation) before that event goes out. A block mid-stream is thrown: the client
// gets the text before the match that had cleared the window (one more event in the protocol's shape), then the
// protocol's error event (or a 4xx when nothing was sent yet).
import type { ClientProtocol, GatewayContext } from "../../../core/pipeline/context.ts";
import type { SseEvent } from "../../../core/sse/parse.ts";
import type { GuardRun } from "../check.ts";
import { moderatedAnswer } from "../stored.ts";
import { meterFor } from "../../../core/metering/meter.ts";
import { Slots, type StreamAdapter } from "./slots.ts";
import { ChatStream } from "./chat.ts";
import { MessagesStream } from "./messages.ts";
import { ResponsesStream } from "./responses.ts";
import { GeminiStream } from "./gemini.ts";

const ADAPTERS: Record<ClientProtocol, new (slots: Slots) => StreamAdapter> = {
  openai: ChatStream,
  anthropic: MessagesStream,
  responses: ResponsesStream,
  gemini: GeminiStream,
};

export function guardStream(ctx: GatewayContext, run: GuardRun, events: AsyncIterable<SseEvent>): AsyncIterable<SseEvent> {
  const slots = new Slots(run, run.guard.moderateOutput);
  // The stored record's verdict is asked as the final event arrives, after every delta: it judges these, as finish does.
  if (run.guard.moderateOutput) run.streamedAnswer = () => slots.answer;
  return guarded(ctx, run, events, slots, new ADAPTERS[ctx.protocol](slots));
}

async function* guarded(ctx: GatewayContext, run: GuardRun, events: AsyncIterable<SseEvent>, slots: Slots, adapter: StreamAdapter): AsyncGenerator<SseEvent> {
  let finished = false;
  const finish = async () => {
    finished = true;
    // The client left (its upstream then ends early): nothing more reaches it, so no verdict is given, billed or noted.
    if (ctx.signal.aborted) return;
    run.allowVerdict("output");
    if (run.guard.moderateOutput) await moderatedAnswer(ctx, run, slots.answer);
  };
  // The window holds text back: a stream cut before its usage (the upstream failing, the client leaving, a block) is
  // billed what the upstream generated, not only what reached the client.
  const meter = meterFor(ctx);
  try {
    for await (const ev of events) {
      meter.generated(ev);
      if (!finished && adapter.isTerminal(ev)) {
        yield* cutShort(slots, adapter, () => adapter.flush());
        await finish();
      }
      yield* cutShort(slots, adapter, () => adapter.onEvent(ev));
    }
    if (finished) return;
    yield* cutShort(slots, adapter, () => adapter.flush());
    await finish();
    if (adapter.heldToEnd) yield* adapter.heldToEnd();
  } catch (e) {
    adapter.failed?.(e);
    throw e;
  }
}

/** `step`'s events; when a block rule cut a slot in it, the text before the match instead, then the refusal thrown. */
function* cutShort(slots: Slots, adapter: StreamAdapter, step: () => SseEvent[]): Generator<SseEvent> {
  let out: SseEvent[];
  try {
    out = step();
  } catch (e) {
    if (slots.cutShort) yield* adapter.flush();
    throw e;
  }
  yield* out;
}
