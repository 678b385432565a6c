// Which answers are worth keeping: a whole, successful one. A JSON answer with a 2xx status (a Responses API answer
// only when it completed); a stream only when it reached its protocol's normal end and carried no error event — a
// stream cut short, or one whose provider failed in the middle, would otherwise be replayed as if it were the answer.
import type { ClientProtocol, GatewayResponse } from "../../core/pipeline/context.ts";
import type { SseEvent } from "../../core/sse/parse.ts";

export function keepsJson(r: GatewayResponse, endpoint: string): r is Extract<GatewayResponse, { kind: "json" }> {
  if (r.kind !== "json" || r.status < 200 || r.status >= 300) return false;
  return endpoint !== "responses" || (r.body as { status?: unknown } | null)?.status === "completed";
}

const isError = (ev: SseEvent) => ev.event === "error" || ev.data.startsWith('{"error"') || ev.data.startsWith('{"type":"error"');

/** The stream ended as its protocol ends a finished answer, with no error event in it. */
export function completeStream(protocol: ClientProtocol, events: SseEvent[]): boolean {
  if (!events.length || events.some(isError)) return false;
  const last = events[events.length - 1]!;
  switch (protocol) {
    case "openai":
      return last.data === "[DONE]";
    case "anthropic":
      return last.event === "message_stop";
    case "responses":
      return last.event === "response.completed" || last.data.startsWith('{"type":"response.completed"');
    case "gemini":
      // No terminal event: the last chunk names why the candidate finished.
      return last.data.includes('"finishReason"');
  }
}
