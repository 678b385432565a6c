// Which failures of a call the server itself answered. A JSON-RPC error response (a tool handler that threw: -32603;
// params it refused) comes from a server that is up: it is that call's failure, and must not count against the
// server's health, or one tenant's calls to a throwing tool would open the circuit for every project. The SDK makes
// the same McpError of such an answer as of its own timeouts and closed connections, so the error answers are noted
// as they arrive, under the message the SDK gives their error, and a call's error is matched against them.
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";

/** Unclaimed answers kept (a list's error answers are never claimed by a call). */
const KEPT = 64;

/** A call the server answered with a JSON-RPC error. */
export class ErrorAnswer extends Error {
  constructor(message: string, readonly code: number) {
    super(message);
  }
}

export class ErrorAnswers {
  private seen: string[] = [];

  /** Note the error responses that arrive on a connected transport (the client has set its onmessage). */
  tap(transport: Transport): void {
    const inner = transport.onmessage;
    transport.onmessage = (message, extra) => {
      const m = message as { id?: unknown; error?: { code?: unknown; message?: unknown } };
      if (m?.id !== undefined && typeof m.error?.code === "number") {
        this.seen.push(`MCP error ${m.error.code}: ${String(m.error.message)}`); // McpError's message
        if (this.seen.length > KEPT) this.seen.shift();
      }
      inner?.(message, extra);
    };
  }

  /** `err` as an ErrorAnswer when the server sent it (each answer matches one error), else `err` itself. */
  classify(err: unknown): unknown {
    const { message, code } = (err ?? {}) as { message?: unknown; code?: unknown };
    if (typeof message !== "string" || typeof code !== "number") return err;
    const i = this.seen.indexOf(message);
    if (i < 0) return err;
    this.seen.splice(i, 1);
    return new ErrorAnswer(message, code);
  }
}
