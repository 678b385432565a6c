// An HTTP MCP server's answers, bounded (mcp.max_result_bytes, default 10 MiB, as the SDK bounds a stdio server's
// messages): without it one tools/call result of 100 MB was read whole, held several times over (RSS +560 MB at its
// peak) and relayed and recorded — a tenant's own server_url could do the same. An answer over the bound is cut (its
// body cancelled, so the connection drops) and the request it answered gets a JSON-RPC error naming the limit: the
// call fails with that error instead of waiting for its timeout. A Server-Sent Events stream is bounded event by
// event (its notifications may go on for the whole session); an event over the bound on a stream that answers no
// one request (the GET stream) ends that stream with an error, and the requests waiting for their answers on it (a
// legacy SSE session's, core/mcp/pending-requests.ts) are failed with an error naming the limit.
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

/**
 * `fetchImpl` with every answer's body bounded to `maxBytes`. `onStreamCut`: an event stream that answers no one
 * request (a legacy SSE session's GET stream, which carries every answer) was cut; it gets the error message for
 * the requests that were waiting on it.
 */
export function boundedFetch(fetchImpl: FetchLike, maxBytes: number, server: string, onStreamCut?: (message: string) => void): FetchLike {
  const tooLarge = `the answer of MCP server "${server}" was larger than ${maxBytes} bytes (mcp.max_result_bytes) and was cut off`;
  const streamCut = `an answer of MCP server "${server}" was larger than ${maxBytes} bytes (mcp.max_result_bytes): the stream carrying its answers (transport: sse) was cut off`;
  return async (url, init) => {
    const res = await fetchImpl(url, init);
    if (!res.body) return res;
    const id = requestId(init?.body);
    const headers = new Headers(res.headers);
    headers.delete("content-length");
    const events = (res.headers.get("content-type") ?? "").includes("text/event-stream");
    const body = events ? boundedEvents(res.body, maxBytes, id, tooLarge, onStreamCut && (() => onStreamCut(streamCut))) : await boundedWhole(res.body, maxBytes, id, tooLarge);
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

/**
 * An event stream with each event bounded: past it, the error answer as one more event, and the stream ends; on a
 * stream that answers no one request, the stream errors and `onCut` is told first.
 */
function boundedEvents(body: ReadableStream<Uint8Array>, maxBytes: number, id: string | number | undefined, tooLarge: string, onCut?: () => void): ReadableStream<Uint8Array> {
  let size = 0; // bytes of the event under way
  let lineEnded = false; // the bytes since the last line end are only CRs, after one (a blank line ends the event)
  return body.pipeThrough(new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      // Line by line with indexOf (native), not byte by byte: a 10 MB answer is one line.
      for (let i = 0; i < chunk.length;) {
        const nl = chunk.indexOf(10, i);
        const stop = nl === -1 ? chunk.length : nl;
        if (stop > i && !onlyCr(chunk, i, stop)) lineEnded = false;
        // The byte past the bound: in this line, or the line end itself.
        let over = size + (stop - i) > maxBytes ? i + (maxBytes - size) : -1;
        size += stop - i;
        if (over === -1 && nl !== -1) {
          if (lineEnded) size = 0;
          lineEnded = true;
          if (++size > maxBytes) over = nl;
        }
        if (over !== -1) {
          controller.enqueue(chunk.subarray(0, over));
          if (id === undefined) {
            onCut?.();
            return controller.error(new Error(tooLarge));
          }
          // The cut event ends unparsed (the client drops it); the answer follows, and the source is cancelled.
          controller.enqueue(new TextEncoder().encode(`\n\nevent: message\ndata: ${errorAnswer(id, tooLarge)}\n\n`));
          return controller.terminate();
        }
        if (nl === -1) break;
        i = nl + 1;
      }
      controller.enqueue(chunk);
    },
  }));
}

/** Whether chunk[from..to) is all CRs (a blank line's "\r" before its "\n"); the first other byte ends the look. */
function onlyCr(chunk: Uint8Array, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (chunk[i] !== 13) return false;
  return true;
}
