// One soak request on an undici Pool with a bare dispatch handler (the generator shares 2 cores with the gateway):
// keeps the status, the headers the checks need, a JSON body whole (they are small) and only the last bytes of a
// stream (enough for its final frames), and can hang up after the first body bytes like a client that goes away.
import type { Pool } from "undici";

export interface Exchange {
  /** 0 when the request failed before response headers. */
  status: number;
  headers: Record<string, string>;
  /** Whole body for non-streams; the last TAIL bytes for streams. */
  body: string;
  /** The response ended normally (onResponseEnd), as opposed to an error or our own hang-up. */
  ended: boolean;
  /** We hung up on purpose after the first body bytes. */
  aborted: boolean;
  error?: string;
  ms: number;
}

const TAIL = 2048;
const KEEP_HEADERS = ["x-request-id", "idempotent-replayed", "x-mg-original-request-id", "content-type"];

export function exchange(pool: Pool, path: string, headers: Record<string, string>, body: string, stream: boolean, abortAfterFirstChunk: boolean, cb: (x: Exchange) => void): void {
  const t0 = performance.now();
  const x: Exchange = { status: 0, headers: {}, body: "", ended: false, aborted: false, ms: 0 };
  let done = false;
  const finish = () => {
    if (done) return;
    done = true;
    x.ms = performance.now() - t0;
    cb(x);
  };
  pool.dispatch(
    { path, method: "POST", headers, body },
    {
      onRequestStart() {},
      onResponseStart(_c, statusCode, h) {
        x.status = statusCode;
        for (const k of KEEP_HEADERS) {
          const v = h[k];
          if (v !== undefined) x.headers[k] = String(v);
        }
      },
      onResponseData(c, chunk) {
        if (abortAfterFirstChunk && x.status === 200) {
          x.aborted = true;
          c.abort(new Error("soak: client hung up"));
          return;
        }
        x.body += chunk.toString("utf8");
        if (stream && x.status === 200 && x.body.length > TAIL) x.body = x.body.slice(-TAIL);
      },
      onResponseEnd() {
        x.ended = true;
        finish();
      },
      onResponseError(_c, err) {
        if (!x.aborted) x.error = `${(err as Error).name}: ${(err as Error).message}`;
        finish();
      },
    },
  );
}
