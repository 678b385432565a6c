// An HTTP MCP server's answers, bounded (mcp.max_result_bytes, default 10 MiB, as the SDK bounds a stdio server's
// messages): without it one tools/call result of 100 MB was read whole, held several times over (RSS +560 MB at its
// peak) and relayed and recorded — a tenant's own server_url could do the same. An answer over the bound is cut (its
// body cancelled, so the connection drops) and the request it answered gets a JSON-RPC error naming the limit: the
// call fails with that error instead of waiting for its timeout. A Server-Sent Events stream is bounded event by
// event (its notifications may go on for the whole session); an event over the bound on a stream that answers no
// one request (the GET stream) ends that stream with an error.
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";

export const DEFAULT_MAX_ANSWER_BYTES = 10 * 1024 * 1024;

/** The JSON-RPC id of the request a POST carries (the SDK sends one message a request). */
function requestId(body: unknown): string | number | undefined {
  if (typeof body !== "string") return undefined;
  try {
    const m = JSON.parse(body);
    return m && typeof m === "object" && typeof m.method === "string" && (typeof m.id === "string" || typeof m.id === "number") ? m.id : undefined;
  } catch {
    return undefined;
  }
}

const errorAnswer = (id: string | number, message: string) => JSON.stringify({ jsonrpc: "2.0", id, error: { code: -32000, message } });

/** `fetchImpl` with every answer's body bounded to `maxBytes`. */
export function boundedFetch(fetchImpl: FetchLike, maxBytes: number, server: string): FetchLike {
  const tooLarge = `the answer of MCP server "${server}" was larger than ${maxBytes} bytes (mcp.max_result_bytes) and was cut off`;
  return async (url, init) => {
    const res = await fetchImpl(url, init);
    if (!res.body) return res;
    const id = requestId(init?.body);
    const headers = new Headers(res.headers);
    headers.delete("content-length");
    const events = (res.headers.get("content-type") ?? "").includes("text/event-stream");
    const body = events ? boundedEvents(res.body, maxBytes, id, tooLarge) : await boundedWhole(res.body, maxBytes, id, tooLarge);
    if (!events && typeof body === "string") headers.set("content-type", "application/json");
    return new Response(body as unknown as BodyInit, { status: res.status, statusText: res.statusText, headers });
  };
}

/** A JSON answer read up to the bound: the bytes, or past it the error answer (or a throw, answering no request). */
async function boundedWhole(body: ReadableStream<Uint8Array>, maxBytes: number, id: string | number | undefined, tooLarge: string): Promise<Uint8Array | string> {
  const reader = body.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => {});
      if (id === undefined) throw new Error(tooLarge);
      return errorAnswer(id, tooLarge);
    }
    parts.push(value);
  }
  return Buffer.concat(parts);
}

/** An event stream with each event bounded: past it, the error answer as one more event, and the stream ends. */
function boundedEvents(body: ReadableStream<Uint8Array>, maxBytes: number, id: string | number | undefined, tooLarge: string): ReadableStream<Uint8Array> {
  let size = 0; // bytes of the event under way
  let lineEnded = false; // the last byte ended a line (a blank line ends the event)
  return body.pipeThrough(new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      for (let i = 0; i < chunk.length; i++) {
        const b = chunk[i]!;
        if (b === 10) {
          if (lineEnded) size = 0;
          lineEnded = true;
        } else if (b !== 13) {
          lineEnded = false;
        }
        if (++size > maxBytes) {
          controller.enqueue(chunk.subarray(0, i));
          if (id === undefined) return controller.error(new Error(tooLarge));
          // The cut event ends unparsed (the client drops it); the answer follows, and the source is cancelled.
          controller.enqueue(new TextEncoder().encode(`\n\nevent: message\ndata: ${errorAnswer(id, tooLarge)}\n\n`));
          return controller.terminate();
        }
      }
      controller.enqueue(chunk);
    },
  }));
}
