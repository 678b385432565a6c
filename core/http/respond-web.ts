// A web Response (status, headers, body stream) written to the Node response: back-pressure from the socket, the
// body cancelled when the client leaves or the request is cut (unless its maker ends it on a shutdown's cut:
// `onCut`), and never a throw out of a stream callback.
import type { ServerResponse } from "node:http";
import type { Outcome } from "../pipeline/context.ts";
import type { GatewayError } from "../errors.ts";
import { shutdownCut } from "../shutdown.ts";
import { writeHeadSafely } from "./safe-head.ts";

export async function writeWebResponse(
  res: ServerResponse, response: Response, headers: Record<string, string>, signal: AbortSignal, hooks: { firstByte(): void },
  onCut?: (cut: GatewayError) => void,
): Promise<Outcome> {
  const out: Record<string, string> = { ...headers };
  response.headers.forEach((v, k) => { out[k] = v; });
  hooks.firstByte();
  writeHeadSafely(res, response.status, out);
  // Streams go out as they come: flush headers now (an MCP GET stream may be quiet for minutes).
  res.flushHeaders();
  const body = response.body;
  if (!body) {
    res.end();
    return { status: response.status, aborted: false };
  }
  const reader = body.getReader();
  const stop = () => { reader.cancel().catch(() => {}); };
  /** A shutdown's cut the body's maker ends on its own (the shutdown drops the socket should it not). */
  let cutEnded: GatewayError | undefined;
  const aborted = () => {
    const cut = onCut && shutdownCut(signal);
    if (!cut) return stop();
    try {
      onCut(cut);
      cutEnded = cut;
    } catch {
      stop();
    }
  };
  res.once("close", stop);
  if (signal.aborted) aborted();
  else signal.addEventListener("abort", aborted, { once: true });
  try {
    for (;;) {
      const step = await reader.read();
      if (step.done) break;
      if (res.destroyed) return { status: response.status, aborted: true };
      if (!res.write(step.value)) await new Promise<void>((r) => { res.once("drain", r); res.once("close", r); });
    }
    if (!res.destroyed) res.end();
    return { status: response.status, aborted: res.destroyed && !res.writableFinished, ...(cutEnded ? { streamError: cutEnded } : {}) };
  } catch {
    // The body failed or was cancelled (client gone, request cut): nothing more to write.
    if (!res.destroyed) res.end();
    return { status: response.status, aborted: true };
  } finally {
    res.off("close", stop);
    signal.removeEventListener("abort", aborted);
  }
}
