// Tiny shared plumbing for the media fake upstreams: a recording JSON server with scripted failures.
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { estimateTokens } from "../../core/metering/estimate-tokens.ts";

export interface Recorded {
  method: string;
  path: string;
  headers: IncomingMessage["headers"];
  body: any;
  raw: Buffer;
}

export type Scripted = { status: number; body?: unknown; headers?: Record<string, string> } | "hang" | "reset";

export interface FakeServer {
  origin: string;
  requests: Recorded[];
  /** Answers for the next requests (matched by path prefix when given), used before the normal behaviour. */
  failures: (Scripted & { path?: string } | { path?: string; scripted: Scripted })[];
  close(): Promise<void>;
}

export type Handler = (req: Recorded, res: ServerResponse) => void | Promise<void>;

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

export interface Loopback {
  origin: string;
  port: number;
  /** Stops listening and drops open keep-alive connections, so a test never waits on them. */
  close(): Promise<void>;
}

/** Every fake upstream's server: a free loopback port, and a close() that does not hang on idle sockets. */
export async function listenLoopback(onRequest: (req: IncomingMessage, res: ServerResponse) => void): Promise<Loopback> {
  const sockets = new Set<Socket>();
  const server: Server = createServer(onRequest);
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const port = (server.address() as AddressInfo).port;
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** A request as the fakes record it: the raw bytes and the JSON they hold (undefined when not JSON). */
export async function readRequest(req: IncomingMessage): Promise<Recorded> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const raw = Buffer.concat(chunks);
  let body: any;
  try {
    body = raw.length ? JSON.parse(raw.toString("utf8")) : undefined;
  } catch {
    body = undefined;
  }
  return { method: req.method!, path: req.url!, headers: req.headers, body, raw };
}

export async function startFake(handler: Handler, errorBody: (status: number) => unknown): Promise<FakeServer> {
  const fake: FakeServer = {
    origin: "",
    requests: [],
    failures: [],
    close: () => server.close(),
  };
  const server = await listenLoopback(async (req, res) => {
    const rec = await readRequest(req);
    fake.requests.push(rec);
    const at = fake.failures.findIndex((f: any) => !f.path || rec.path.startsWith(f.path));
    if (at >= 0) {
      const f: any = fake.failures.splice(at, 1)[0];
      const s: Scripted = f.scripted ?? (typeof f === "string" ? f : { status: f.status, body: f.body, headers: f.headers });
      if (s === "hang") return;
      if (s === "reset") {
        req.socket.destroy();
        return;
      }
      sendJson(res, s.status, s.body ?? errorBody(s.status), s.headers);
      return;
    }
    try {
      await handler(rec, res);
    } catch (err) {
      if (!res.headersSent) sendJson(res, 500, errorBody(500));
      else res.destroy(err as Error);
    }
  });
  fake.origin = server.origin;
  return fake;
}

/** Deterministic unit vector for a text (a fake upstream's "model"). */
export function fakeVector(text: string, dims: number, salt = ""): number[] {
  const out: number[] = [];
  let h = 2166136261;
  for (const ch of salt + text) h = Math.imul(h ^ ch.charCodeAt(0), 16777619) >>> 0;
  for (let i = 0; i < dims; i++) {
    h = Math.imul(h ^ (i + 0x9e3779b9), 16777619) >>> 0;
    out.push((h / 0xffffffff) * 2 - 1);
  }
  const n = Math.hypot(...out);
  return out.map((x) => Math.fround(x / n));
}

/** The fakes' "tokenizer": the gateway's own estimate, so split-by-tokens tests agree with the upstream's count. */
/** Random letters and digits, the alphabet of the providers' own ids (chatcmpl-…, msg_01…, Gemini's responseId). */
export function alnum(n: number): string {
  const abc = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  let s = "";
  for (const b of randomBytes(n)) s += abc[b % abc.length];
  return s;
}

export const approxTokens = (s: string) => Math.max(1, estimateTokens(s));
