// The requests a transport has sent and not yet had answered, so they can be failed at once when the stream their
// answers would come on is cut: a legacy HTTP+SSE server (transport: sse) answers every request on its session's
// one GET stream, and an answer over mcp.max_result_bytes cuts that stream (core/mcp/bounded-fetch.ts) — the call
// waiting on it would otherwise wait out its whole timeout and be reported a timeout. Which of them the cut answer
// was for is unknown (the SDK writes a result's id after it), and none can be answered on that session any more.
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";

type Id = string | number;

export class PendingRequests {
  private readonly ids = new Set<Id>();
  private transport?: Transport;

  /** Watch a connected transport's requests and answers (tap after the client has set its onmessage). */
  tap(transport: Transport): void {
    this.transport = transport;
    const send = transport.send.bind(transport);
    transport.send = (message, options) => {
      const m = message as { id?: unknown; method?: unknown; params?: { requestId?: unknown } };
      if (typeof m.method === "string" && (typeof m.id === "string" || typeof m.id === "number")) this.ids.add(m.id);
      // A request given up (its timeout, its caller's abort) is answered by no one: forgotten.
      if (m.method === "notifications/cancelled") this.ids.delete(m.params?.requestId as Id);
      return send(message, options);
    };
    const inner = transport.onmessage;
    transport.onmessage = (message, extra) => {
      const m = message as { id?: unknown; method?: unknown };
      if (m.method === undefined && (typeof m.id === "string" || typeof m.id === "number")) this.ids.delete(m.id);
      inner?.(message, extra);
    };
  }

  /** Answer every request still waiting with a JSON-RPC error carrying `message` (as if the server had). */
  failAll(message: string): void {
    const t = this.transport;
    if (!t?.onmessage) return;
    for (const id of [...this.ids]) t.onmessage({ jsonrpc: "2.0", id, error: { code: -32000, message } });
  }
}
