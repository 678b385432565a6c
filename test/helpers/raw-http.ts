// HTTP/1.1 over a raw TCP socket, for requests no HTTP client will send: broken framing, byte-at-a-time
// writes, pipelining. `exchange` runs a writer and collects everything the server sends until it closes the
// connection (or the wait runs out); `parseResponses` splits what came back into responses.
import { connect, type Socket } from "node:net";

export interface Exchange {
  data: Buffer;
  /** The server closed (or reset) the connection before the wait ran out. */
  closed: boolean;
  /** Write or socket errors the client saw (EPIPE / ECONNRESET once the server has hung up). */
  errors: string[];
  responses: RawResponse[];
}

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  json?: any;
}

export interface Writer {
  socket: Socket;
  /** Resolves when written (waits for drain), false once the connection is gone. */
  write(chunk: string | Buffer): Promise<boolean>;
  /** Resolves after ms, or at once when the connection is gone (returns false then). */
  pause(ms: number): Promise<boolean>;
  gone(): boolean;
}

export function exchange(port: number, writer: (w: Writer) => Promise<void>, opts: { waitMs: number; host?: string }): Promise<Exchange> {
  return new Promise((resolve) => {
    const socket = connect(port, opts.host ?? "127.0.0.1");
    const chunks: Buffer[] = [];
    const errors: string[] = [];
    let closed = false;
    let timer: NodeJS.Timeout | undefined;
    const done = (byServer: boolean) => {
      if (closed) return;
      closed = true;
      clearTimeout(timer);
      if (!byServer) socket.destroy();
      const data = Buffer.concat(chunks);
      resolve({ data, closed: byServer, errors, responses: parseResponses(data) });
    };
    socket.on("data", (d) => chunks.push(d));
    socket.on("error", (e) => errors.push((e as NodeJS.ErrnoException).code ?? e.message));
    socket.on("close", () => done(true));
    const w: Writer = {
      socket,
      gone: () => closed || socket.destroyed,
      write: (chunk) =>
        new Promise((res) => {
          if (w.gone()) return res(false);
          const ok = socket.write(chunk, (err) => {
            if (err) res(false);
            else if (ok) res(true);
          });
          if (!ok) socket.once("drain", () => res(true)).once("close", () => res(false));
        }),
      pause: (ms) =>
        new Promise((res) => {
          if (w.gone()) return res(false);
          const t = setTimeout(() => {
            socket.off("close", onClose);
            res(!w.gone());
          }, ms);
          const onClose = () => {
            clearTimeout(t);
            res(false);
          };
          socket.once("close", onClose);
        }),
    };
    socket.once("connect", () => {
      writer(w).catch((e) => errors.push(String(e))).finally(() => {
        if (!closed) timer = setTimeout(() => done(false), opts.waitMs);
      });
    });
  });
}

/** Every complete response in a byte stream (content-length or chunked bodies; a trailing close-delimited one). */
export function parseResponses(data: Buffer): RawResponse[] {
  const out: RawResponse[] = [];
  let at = 0;
  while (at < data.length) {
    const end = data.indexOf("\r\n\r\n", at);
    if (end < 0) break;
    const [statusLine, ...lines] = data.subarray(at, end).toString("latin1").split("\r\n");
    const m = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine!);
    if (!m) break;
    const headers: Record<string, string> = {};
    for (const l of lines) {
      const i = l.indexOf(":");
      if (i > 0) headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
    }
    let p = end + 4;
    let body: Buffer;
    if (headers["content-length"] !== undefined) {
      body = data.subarray(p, p + Number(headers["content-length"]));
      p += body.length;
    } else if (/chunked/i.test(headers["transfer-encoding"] ?? "")) {
      const parts: Buffer[] = [];
      for (;;) {
        const lineEnd = data.indexOf("\r\n", p);
        if (lineEnd < 0) break;
        const size = parseInt(data.subarray(p, lineEnd).toString("latin1"), 16);
        p = lineEnd + 2;
        if (!size) {
          p += 2;
          break;
        }
        parts.push(data.subarray(p, p + size));
        p += size + 2;
      }
      body = Buffer.concat(parts);
    } else {
      body = data.subarray(p);
      p = data.length;
    }
    const text = body.toString("utf8");
    let json: any;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    out.push({ status: Number(m[1]), headers, body: text, json });
    at = p;
  }
  return out;
}

/** A request head (request line + headers + blank line). */
export function head(method: string, path: string, headers: Record<string, string | number>): string {
  return `${method} ${path} HTTP/1.1\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join("")}\r\n`;
}
